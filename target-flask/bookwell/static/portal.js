(() => {
  async function showCredit() {
    const response = await fetch("/api/me");
    if (!response.ok) return;
    const data = await response.json();
    document.getElementById("credit-balance").textContent = `£${(data.credit_cents / 100).toFixed(2)}`;
  }
  showCredit();
})();
