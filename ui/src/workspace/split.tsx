// Edit and Preview side by side: a choice this browser remembers, offered
// only where the screen is wide enough for both (1100 px and wider).

import { useEffect, useMemo, useState } from "preact/hooks";

const key = "chopin:plan-split";

export function useSplit(): [boolean, (on: boolean) => void, boolean] {
  const mq = useMemo(() => matchMedia("(min-width: 1100px)"), []);
  const [wide, setWide] = useState(mq.matches);
  useEffect(() => {
    const f = () => setWide(mq.matches);
    mq.addEventListener("change", f);
    return () => mq.removeEventListener("change", f);
  }, []);
  const [on, setOn] = useState(() => {
    try {
      return localStorage.getItem(key) === "1";
    } catch {
      return false;
    }
  });
  const set = (v: boolean) => {
    setOn(v);
    try {
      if (v) localStorage.setItem(key, "1");
      else localStorage.removeItem(key);
    } catch {
      /* remembered for this page only */
    }
  };
  return [on, set, wide];
}

export function SplitToggle({ on, onChange }: { on: boolean; onChange: (on: boolean) => void }) {
  return (
    <button
      class={"quiet split-toggle" + (on ? " on" : "")}
      aria-pressed={on}
      title={on ? "Show Edit or Preview, one at a time" : "Show Edit and Preview side by side"}
      onClick={() => onChange(!on)}
    >
      Side by side
    </button>
  );
}
