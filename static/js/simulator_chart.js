// The prize-pool simulator's chart (templates/lobby/simulator.html), drawn with Chart.js
// from the prizes the server computed (lobby/simulator.py).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("prize-chart-data").textContent);
  new Chart(document.getElementById("prize-chart"), {
    type: "bar",
    data: {
      labels: data.places,
      datasets: [{ label: window.gettext ? window.gettext("Prize") : "Prize", data: data.prizes_minor.map((minor) => minor / 100), backgroundColor: "rgba(242, 193, 78, 0.75)" }],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      plugins: { legend: { display: false } },
      scales: {
        x: { title: { display: true, text: window.gettext ? window.gettext("Place") : "Place" } },
        y: { title: { display: true, text: window.gettext ? window.gettext("Prize") : "Prize" }, beginAtZero: true },
      },
    },
  });
})();
