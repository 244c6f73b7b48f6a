(() => {
  const search = document.getElementById("patient-search");
  if (!search) return;
  const list = document.getElementById("patient-suggestions");
  const patientId = document.getElementById("patient_id");
  const details = document.getElementById("patient-details");
  let timer;

  async function suggest() {
    const response = await fetch(`/api/desk/patients/search?q=${encodeURIComponent(search.value)}`);
    const data = await response.json();
    list.replaceChildren(
      ...data.patients.map((patient) => {
        const item = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = `${patient.name} (${patient.email})`;
        button.addEventListener("click", () => choose(patient.email));
        item.append(button);
        return item;
      }),
    );
  }

  async function choose(email) {
    const response = await fetch(`/api/desk/patients/lookup?email=${encodeURIComponent(email)}`);
    const { patient } = await response.json();
    patientId.value = patient.id;
    search.value = patient.name;
    details.textContent = `${patient.phone || "no phone"} · born ${patient.date_of_birth || "unknown"}`;
    list.replaceChildren();
  }

  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(suggest, 200);
  });
})();
