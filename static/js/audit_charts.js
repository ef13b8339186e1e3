// Charts of the auditor report (backoffice/audit_report.html), drawn with Chart.js from
// the series the server computed (backoffice/auditing.py, list_chart_series).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("audit-charts").textContent);
  const minorDigits = 2;
  for (const series of data) {
    const rtp = document.getElementById("rtp-" + series.currency);
    new Chart(rtp, {
      data: {
        labels: series.days,
        datasets: [
          { type: "line", label: "RTP %", data: series.rtp_percent, yAxisID: "pct", borderColor: "#1b6b3a", tension: 0.2 },
          {
            type: "bar",
            label: "Rake (" + series.currency + ")",
            data: series.rake_minor.map((minor) => minor / 10 ** minorDigits),
            yAxisID: "money",
            backgroundColor: "rgba(201, 151, 0, 0.55)",
          },
        ],
      },
      options: {
        animation: false,
        scales: {
          pct: { type: "linear", position: "left", title: { display: true, text: "RTP %" } },
          money: { type: "linear", position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: series.currency } },
        },
      },
    });
    new Chart(document.getElementById("prizes-" + series.currency), {
      type: "bar",
      data: {
        labels: series.prize_buckets,
        datasets: [{ label: "winning entries", data: series.prize_counts, backgroundColor: "#2d5fa8" }],
      },
      options: { animation: false, plugins: { legend: { display: false } } },
    });
  }
})();
