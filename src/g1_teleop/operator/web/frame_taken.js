// g1_teleop (operator/webxr_video.py): the page answers each binary message it takes from its WebSocket (a robot eye
// frame, or any other vuer event) with a vuer client event, FRAME_TAKEN, carrying the message's size in bytes. The
// server sends a page its next frame only once the last one was taken, so that frames a busy page cannot keep up
// with are replaced at the server by newer ones instead of queueing in the browser (a socket alone cannot tell:
// Chromium reads it and queues the messages for a busy page itself). Loaded before vuer's client, which then opens
// its WebSocket through this class. The event is msgpack, as the client's own: {etype, ts (ms), value (bytes)}. On
// opening, the socket says FRAME_TAKEN 0 (nothing taken yet): the server then holds this page's frames from the first.
(() => {
  const NativeWebSocket = window.WebSocket;
  const utf8 = new TextEncoder();
  const fixstr = (text) => {
    const bytes = utf8.encode(text);
    return [0xa0 | bytes.length, ...bytes];
  };
  const head = Uint8Array.from([0x83, ...fixstr("etype"), ...fixstr("FRAME_TAKEN"), ...fixstr("ts"), 0xcb]);
  const valueKey = Uint8Array.from([...fixstr("value"), 0xce]);

  function frameTaken(size) {
    const event = new Uint8Array(head.length + 8 + valueKey.length + 4);
    const view = new DataView(event.buffer);
    event.set(head, 0);
    view.setFloat64(head.length, Date.now());
    event.set(valueKey, head.length + 8);
    view.setUint32(head.length + 8 + valueKey.length, size);
    return event;
  }

  class AnsweringWebSocket extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => this.send(frameTaken(0)));
      this.addEventListener("message", (message) => {
        if (typeof message.data === "string" || this.readyState !== NativeWebSocket.OPEN) {
          return;
        }
        this.send(frameTaken(message.data.size ?? message.data.byteLength));
      });
    }
  }
  window.WebSocket = AnsweringWebSocket;
})();
