// Chopin's own words for the refusals a person meets while no Planner can
// act. The wire keeps the agent protocol's texts (its planner-not-attached
// speaks of machines and agent clients); what a person reads says what
// happened and what to do next in the product's terms.

// notSentWords says why a message to @chopin was refused for want of a
// Planner, in Chopin's words, from the Planner's state as the tab knows it.
export function notSentWords(p: { state: string; login?: string }): string {
  const kept = " Your message is still in the box.";
  if (p.state === "grace" || p.state === "disconnected")
    return (
      `Not sent: ${p.login ? `@${p.login}'s` : "this document's"} Planner is offline, so nobody can reply to @chopin now. ` +
      "Send it again once it is back, or connect another Planner." +
      kept
    );
  return (
    "Not sent: no Planner is attached to this document, so nobody can reply to @chopin. " +
    "Connect a Planner (the bundled one runs with a local model server), then send it again." +
    kept
  );
}

// acceptWords says, under an open comment, why Accept waits for a Planner;
// "" when one is attached and Accept can be carried out.
export function acceptWords(p: { state: string; login?: string }): string {
  if (p.state === "attached" || p.state === "unknown") return "";
  const who = p.state === "grace" || p.state === "disconnected" ? "The Planner is offline" : "No Planner is attached";
  return `${who}, so nobody can revise this passage yet. Accept waits for one: connect a Planner, then accept; the comment stays open meanwhile.`;
}
