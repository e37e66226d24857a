// Isolated shows its children, or, when showing them throws, its text as
// plain text with a note: one Chat message, Preview block or decision card
// that cannot be shown never takes the others with it (docs/room-protocol.md,
// "How deep Markdown is read"). Markdown that fails to convert is caught
// sooner, in markdown.ts; this catches whatever else a render throws.

import { Component, type ComponentChildren } from "preact";
import "./markdown.css";

interface Props {
  text: string; // what to show instead
  what: "message" | "block" | "card";
  children: ComponentChildren;
}

export class Isolated extends Component<Props, { failed: string | null }> {
  state = { failed: null as string | null };
  componentDidCatch(e: unknown) {
    console.warn(`A ${this.props.what} could not be shown:`, e);
    this.setState({ failed: this.props.text });
  }
  render({ text, what, children }: Props) {
    // A new text is tried again.
    if (this.state.failed === null || this.state.failed !== text) return children;
    return (
      <div class="md-isolated">
        <p class="md-fallback muted small">This {what} could not be shown, so it is shown as plain text.</p>
        <p class="md-plain">{text}</p>
      </div>
    );
  }
}
