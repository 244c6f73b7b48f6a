// A small Socket.IO client (Engine.IO 4 over a WebSocket): the desk and the waiting-room screen only
// exchange named events in one namespace, so the full client library is not worth shipping.
(() => {
  function connect(namespace, handlers) {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/socket.io/?EIO=4&transport=websocket`);
    const prefix = namespace === "/" ? "" : `${namespace},`;
    const acks = new Map();
    const pending = [];
    let nextAck = 0;
    let joined = false;

    function send(packet) {
      if (joined) socket.send(packet);
      else pending.push(packet);
    }

    socket.addEventListener("message", (message) => {
      const data = String(message.data);
      if (data === "2") return socket.send("3");
      if (data[0] === "0") return socket.send(`40${prefix}`);
      if (data[0] !== "4") return;
      const type = data[1];
      let rest = data.slice(2);
      if (prefix && rest.startsWith(prefix)) rest = rest.slice(prefix.length);
      if (type === "0") {
        joined = true;
        for (const packet of pending.splice(0)) socket.send(packet);
        handlers.connect?.();
      } else if (type === "4") {
        handlers.connect_error?.(JSON.parse(rest || "{}"));
      } else if (type === "2" || type === "3") {
        const [, id, body] = rest.match(/^(\d*)([\s\S]*)$/);
        const args = JSON.parse(body);
        if (type === "2") handlers[args[0]]?.(...args.slice(1));
        else acks.get(Number(id))?.(...args);
      }
    });
    socket.addEventListener("close", () => handlers.disconnect?.());

    return {
      emit(event, data, ack) {
        let id = "";
        if (ack) {
          nextAck += 1;
          acks.set(nextAck, ack);
          id = String(nextAck);
        }
        send(`42${prefix}${id}${JSON.stringify([event, data])}`);
      },
    };
  }

  window.bookwellLive = { connect };
})();
