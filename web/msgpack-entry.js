// The browser page's msgpack codec: @msgpack/msgpack, bundled by `make web` into
// server/spider_server/static/vendor/msgpack.js (see docs/web.md).
export { decode, encode } from "@msgpack/msgpack";
