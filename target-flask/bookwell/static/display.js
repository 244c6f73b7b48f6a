(() => {
  const list = document.getElementById("waiting");
  const live = window.bookwellLive.connect("/waiting-room", {
    connect() {
      live.emit("watch", {
        clinic: list.dataset.clinic,
        key: list.dataset.key,
      });
    },
    queue(data) {
      list.replaceChildren(
        ...data.waiting.map((entry) => {
          const item = document.createElement("li");
          item.textContent = `${entry.patient}, ${entry.practitioner}${entry.status === "in_room" ? " (please go in)" : ""}`;
          return item;
        }),
      );
    },
  });
})();
