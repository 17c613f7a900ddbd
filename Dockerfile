# The gateway's image (docs/CLUSTER.md "Deploy with Docker"): one image for every role, chosen by
# VGW_ROLE. Built in stages so the runtime holds only the compiled program, the media I/O addon,
# the console and the production dependencies, and runs as the unprivileged `node` user.

# Production dependencies, compiled here: better-sqlite3 is a native module.
FROM node:20-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the project's own `prepare` needs the dev tools; the one dependency that
# builds something is rebuilt explicitly.
RUN npm ci --omit=dev --ignore-scripts && npm rebuild better-sqlite3

# The program, the media I/O addon (native/media-io, node-gyp) and the console (Vite).
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY native ./native
COPY scripts ./scripts
COPY src ./src
COPY console ./console
# The addon is optional at run time (media falls back to node:dgram), but an image without it
# would cost a third more CPU per packet: fail the build instead.
RUN npm run build:native && test -f native/media-io/build/Release/media_io.node \
 && npm run build && npm run build:console

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    VGW_DATA_DIR=/var/lib/vgw \
    VGW_RECORDINGS_DIR=/var/lib/vgw-recordings
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/native/media-io/build/Release/media_io.node ./native/media-io/build/Release/media_io.node
COPY package.json ./
COPY sbc-config/carriers.example.yaml ./sbc-config/
# Owned by `node` in the image, so named volumes mounted there start with that owner.
RUN mkdir -p /var/lib/vgw /var/lib/vgw-recordings && chown node:node /var/lib/vgw /var/lib/vgw-recordings
USER node
# The data folder: master key (unless VGW_SECRET_KEY), SQLite file (unless VGW_DATABASE_URL), CDR journal.
VOLUME ["/var/lib/vgw"]
EXPOSE 8080 5060/udp 5060/tcp
CMD ["node", "dist/main.js"]
