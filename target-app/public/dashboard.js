// Live activity feed and the velocity sparkline on the dashboard.
(() => {
  const feed = document.getElementById("live-activity");
  const status = document.getElementById("live-status");
  const openCount = document.getElementById("stat-open");
  let lastSeq = 0;

  function describe(event) {
    const who = event.actor ? event.actor.name : "Someone";
    const data = event.data || {};
    if (data.task) return `${who} ${event.type.split(".")[1]} task ${data.task.key}`;
    if (data.project) return `${who} ${event.type.split(".")[1]} project ${data.project.key}`;
    if (data.entry) return `${who} logged ${data.entry.hours}h`;
    return `${who}: ${event.type}`;
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    const query = lastSeq ? `?since=${lastSeq}` : "";
    const socket = new WebSocket(`${scheme}://${window.location.host}/ws${query}`);
    socket.addEventListener("open", () => {
      status.textContent = "live";
    });
    socket.addEventListener("close", () => {
      status.textContent = "offline";
      setTimeout(connect, 5000);
    });
    socket.addEventListener("message", (message) => {
      const event = JSON.parse(message.data);
      if (typeof event.seq === "number") lastSeq = Math.max(lastSeq, event.seq);
      if (event.type === "hello" || event.type === "pong") return;
      const item = document.createElement("li");
      item.textContent = describe(event);
      feed.prepend(item);
      if (event.type === "task.created" && openCount)
        openCount.textContent = String(Number(openCount.textContent) + 1);
    });
  }

  connect();

  const chart = document.getElementById("velocity");
  const weeks = JSON.parse(chart.dataset.weeks);
  const max = Math.max(1, ...weeks.map((week) => week.done));
  chart.innerHTML = weeks
    .map(
      (week) =>
        `<span title="${week.week}: ${week.done}" style="display:inline-block;width:10%;margin-right:2%;` +
        `height:${(week.done / max) * 100}%;background:#1d4ed8"></span>`,
    )
    .join("");
})();
