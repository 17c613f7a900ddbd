{
  "targets": [
    {
      "target_name": "media_io",
      "sources": ["media_io.c", "batch.c", "relay.c", "relay_thread.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"]
    }
  ]
}
