// The composer's model and thinking level (chat:model, spec "Capability
// catalog"): offered only when the attached client reported a catalog. Every
// name and level is shown exactly as the client wrote it, as text.

import { useState } from "preact/hooks";
import { api } from "../api";
import type { CatalogModel } from "../protocol";
import type { WorkspaceCtx } from "./context";

const label = (m: CatalogModel) => m.name || m.id;

export function ModelPicker({ ctx, onError }: { ctx: WorkspaceCtx; onError: (message: string) => void }) {
  const m = ctx.state.model;
  const [busy, setBusy] = useState(false);
  if (!m?.offered || !m.models?.length) return null;
  const models = m.models;
  const chosen = m.model ? models.findIndex((x) => x.id === m.model) : -1; // a repeated id is its first entry
  const fallback = models.find((x) => x.id === m.default?.id);
  const current = chosen >= 0 ? models[chosen] : fallback;
  const levels = (current?.thinkingLevels ?? []).filter((l) => l !== "");
  const defaultLevel = levels.includes("Default") ? "Model default" : "Default";

  // Models in the order given, grouped by provider where they have one.
  const groups: { key: string; name: string; items: [CatalogModel, number][] }[] = [];
  models.forEach((x, i) => {
    const key = x.provider ? "p:" + x.provider.id : "";
    const last = groups[groups.length - 1];
    if (last && last.key === key) last.items.push([x, i]);
    else groups.push({ key, name: x.provider ? x.provider.name || x.provider.id : "", items: [[x, i]] });
  });

  async function choose(body: { model?: string; thinkingLevel?: string }) {
    setBusy(true);
    onError("");
    try {
      await api("PUT", `/api/channels/${ctx.state.channel.id}/planner/model`, body);
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }
  const option = ([x, i]: [CatalogModel, number]) => (
    <option key={i} value={String(i)} title={x.description || undefined}>
      {label(x)}
    </option>
  );
  return (
    <div class="model-picker">
      <select
        aria-label="Model"
        disabled={busy || !ctx.state.canEdit}
        value={chosen >= 0 ? String(chosen) : ""}
        onChange={(e) => {
          const v = e.currentTarget.value;
          choose(v === "" ? {} : { model: models[Number(v)].id });
        }}
      >
        <option value="">{fallback ? `Default · ${label(fallback)}` : "Default model"}</option>
        {groups.map((g, k) =>
          g.key ? (
            <optgroup key={k} label={g.name}>
              {g.items.map(option)}
            </optgroup>
          ) : (
            g.items.map(option)
          ),
        )}
      </select>
      {levels.length > 0 && (
        <select
          aria-label="Thinking level"
          disabled={busy || !ctx.state.canEdit}
          value={m.thinkingLevel && levels.includes(m.thinkingLevel) ? m.thinkingLevel : ""}
          onChange={(e) => {
            const v = e.currentTarget.value;
            choose({ ...(m.model ? { model: m.model } : {}), ...(v ? { thinkingLevel: v } : {}) });
          }}
        >
          <option value="">{defaultLevel}</option>
          {levels.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      )}
      {m.unavailable && (
        <span class="model-unavailable small" role="status">
          {m.modelName || m.model || "The chosen model"} is no longer available; the Planner will use its default.
        </span>
      )}
    </div>
  );
}
