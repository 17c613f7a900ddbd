/** @module Speech recognition engines the gateway runs on call audio itself (configuration `transcription.engine`). */
export { DEFAULT_POCKETSPHINX_ARGS, POCKETSPHINX_RATE, PocketsphinxRecognizer, type PocketsphinxOptions } from './pocketsphinx-recognizer.js';
