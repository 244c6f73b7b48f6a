(() => {
  const form = document.getElementById("booking");
  if (!form) return;
  const practitioner = form.querySelector("#practitioner_id");
  const day = form.querySelector("#date");
  const time = form.querySelector("#time");

  async function loadTimes() {
    if (!day.value) return;
    const query = new URLSearchParams({
      practitioner: practitioner.value,
      date: day.value,
    });
    const response = await fetch(`/api/clinics/${form.dataset.clinic}/slots?${query}`);
    time.replaceChildren();
    if (!response.ok) {
      time.append(new Option("No times available", ""));
      return;
    }
    const data = await response.json();
    if (data.times.length === 0) time.append(new Option("Fully booked", ""));
    for (const slot of data.times) time.append(new Option(slot, slot));
  }

  practitioner.addEventListener("change", loadTimes);
  day.addEventListener("change", loadTimes);
  loadTimes();
})();
