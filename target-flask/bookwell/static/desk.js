(() => {
  const sheet = document.getElementById("day-sheet");
  if (!sheet) return;
  const token = document.querySelector('meta[name="csrf-token"]').content;
  const labels = {
    booked: "Booked",
    checked_in: "Checked in",
    in_room: "With practitioner",
    attended: "Attended",
    no_show: "Did not attend",
    cancelled: "Cancelled",
  };

  function showStatus(id, status) {
    const row = sheet.querySelector(`tr[data-id="${id}"]`);
    if (!row) return;
    row.dataset.status = status;
    row.querySelector(".status").textContent = labels[status] || status;
  }

  async function setStatus(id, status) {
    const response = await fetch(`/api/desk/appointments/${id}/status`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
      body: JSON.stringify({ status }),
    });
    const result = await response.json();
    if (result.ok) showStatus(id, result.status);
  }

  async function refresh() {
    const query = new URLSearchParams({
      date: sheet.dataset.date,
      sort: sheet.dataset.sort,
    });
    const response = await fetch(`/api/desk/appointments?${query}`);
    if (!response.ok) return;
    const data = await response.json();
    const known = new Set([...sheet.querySelectorAll("tbody tr")].map((row) => Number(row.dataset.id)));
    if (data.appointments.some((a) => !known.has(a.id))) return location.reload();
    for (const a of data.appointments) showStatus(a.id, a.status);
  }

  sheet.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-status]");
    if (button) setStatus(button.closest("tr").dataset.id, button.dataset.status);
  });

  const live = window.bookwellLive.connect("/desk", {
    connect() {
      live.emit("watch_day", {
        clinic_id: sheet.dataset.clinic,
        date: sheet.dataset.date,
      });
    },
    appointment_booked: refresh,
    appointment_status: (a) => showStatus(a.id, a.status),
    appointment_cancelled: (a) => showStatus(a.id, "cancelled"),
  });
  setInterval(refresh, 60000);
})();
