// The practice banner over the Hold'em screen: re-read every 3 s (level, blinds, hands,
// eliminations), the time left counted down each second; the summary when the game ends.
import { fmt, formatMinor, gettext } from "./common.js";

const banner = document.querySelector('[data-testid="practice-banner"]');
if (banner) {
  const field = (name) => banner.querySelector(`[data-field="${name}"]`);
  const clock = field("seconds_left");
  let seconds = Number(clock?.dataset.seconds || 0);
  const show = () => { if (clock) clock.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`; };
  show();
  setInterval(() => { seconds = Math.max(0, seconds - 1); show(); }, 1000);
  const refresh = async () => {
    try {
      const response = await fetch(banner.dataset.bannerUrl, { headers: { Accept: "application/json" } });
      if (!response.ok) return;
      const data = await response.json();
      if (data.status !== "running") { window.location.assign(banner.dataset.summaryUrl); return; }
      for (const name of ["level", "hands_played", "hands_left", "players_left"]) {
        const node = field(name);
        if (node && data[name] !== null) node.textContent = String(data[name]);
      }
      for (const name of ["small_blind_minor", "big_blind_minor", "ante_minor"]) {
        const node = field(name);
        if (node) node.textContent = formatMinor(data[name], banner.dataset.currencyLabel || "FUN");
      }
      seconds = data.seconds_left;
      const out = field("eliminations");
      if (out) out.textContent = data.eliminations.length ? fmt(gettext("Eliminated: %(players)s"), { players: data.eliminations.map(([name, hand]) => fmt(gettext("%(name)s (hand %(hand)s)"), { name, hand })).join(", ") }) : "";
    } catch { /* offline: the next poll tries again */ }
  };
  setInterval(refresh, 3000);
}
