// How deep Markdown is read (docs/room-protocol.md, "How deep Markdown is
// read"). marked works by recursion, once for each level a block quote,
// list, emphasis or component nests, and some of its searches start again
// at each level: a message of 2,000 ">" overflowed the stack, 5,000 "*a"
// and as many "a*" took 5 s and then overflowed, and a plan of lists
// indented by tabs took 30 s. bound() reads the text once, line by line,
// and escapes with a backslash each marker or delimiter past maxDepth, so
// marked reads it, and shows it, as text; a text within the bounds comes
// back as it was.

// maxDepth is how many levels of each kind of nesting are read: block
// quotes and list items together; open emphasis delimiters (* and _, a run
// of them counting one a character); open brackets of links and images;
// the Plan's components (<Callout>, <Tabs>).
export const maxDepth = 32;

// A Bounded text is the text marked reads: the source with a backslash
// inserted at each of inserted, offsets into text, ascending.
export interface Bounded {
  text: string;
  inserted: number[];
}

// sourceOffset turns an offset into a bounded text into one into its source.
export function sourceOffset(b: Bounded, at: number): number {
  let lo = 0;
  let hi = b.inserted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (b.inserted[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return at - lo;
}

const SPACE = 32;
const TAB = 9;
const isSpace = (c: number) => c === SPACE || c === TAB;
// CommonMark's ASCII punctuation; other characters count as letters here.
const isPunct = (c: number) =>
  (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
// White space, and the line's ends (NaN past them).
const isWhite = (c: number) => Number.isNaN(c) || c <= SPACE || c === 0xa0;

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== SPACE && c !== TAB && c !== 13) return false;
  }
  return true;
}

// markerWidth is the length of the container marker at line[i] (">", or a
// list marker followed by a space, a tab or the line's end), or 0.
function markerWidth(line: string, i: number): number {
  const c = line.charCodeAt(i);
  const endsMarker = (j: number) => j === line.length || isSpace(line.charCodeAt(j));
  if (c === 62) return 1; // >
  if (c === 45 || c === 43 || c === 42) return endsMarker(i + 1) ? 1 : 0; // - + *
  let j = i;
  while (j - i < 9 && line.charCodeAt(j) >= 48 && line.charCodeAt(j) <= 57) j++;
  const d = line.charCodeAt(j);
  return j > i && (d === 46 || d === 41) && endsMarker(j + 1) ? j + 1 - i : 0; // . )
}

// thematicTail is where the line's longest suffix of one of - * _ and
// blanks starts, and how many of that character it holds: a marker from
// which three or more follow starts a thematic break, which nests nothing.
function thematicTail(line: string): { start: number; c: number; n: number } {
  const t = { start: line.length, c: 0, n: 0 };
  for (let j = line.length - 1; j >= 0; j--) {
    const c = line.charCodeAt(j);
    if (c === 45 || c === 42 || c === 95) {
      if (t.c && t.c !== c) break;
      t.c = c;
      t.n++;
    } else if (!isSpace(c) && c !== 13) break;
    t.start = j;
  }
  return t;
}

// An open emphasis delimiter run: its character and how many it holds.
interface Run {
  c: number;
  n: number;
}

// Reader holds what bound() knows between lines.
class Reader {
  escapes: number[] = []; // source offsets to escape, ascending within a line
  fence: { c: number; n: number } | null = null; // the fenced code block the lines are in
  items: number[] = []; // the content column of each open list item, innermost last
  prevBlank = true;
  prevText = false; // the last line was paragraph text, which a lazy line continues
  // Inline, per paragraph: open emphasis runs and brackets.
  runs: Run[] = [];
  weight = 0; // characters in runs
  brackets = 0;
  // The Plan's components open at the line's start, innermost last, and
  // the source offsets of the ones escaped.
  open: string[] = [];
  componentEscapes: number[] = [];

  resetInline() {
    this.runs = [];
    this.weight = 0;
    this.brackets = 0;
  }

  // line reads one line that starts at offset base of the source.
  line(line: string, base: number, components: boolean) {
    if (this.fence) {
      const m = /^[ \t>]*(`{3,}|~{3,})[ \t\r]*$/.exec(line);
      if (m && m[1].charCodeAt(0) === this.fence.c && m[1].length >= this.fence.n) this.fence = null;
      return;
    }
    if (components) this.componentTags(line, base);
    if (isBlank(line)) {
      this.prevBlank = true;
      this.prevText = false;
      this.resetInline();
      return;
    }
    let depth = 0;
    let i = 0;
    // Block quotes.
    for (;;) {
      let j = i;
      while (j - i < 3 && line.charCodeAt(j) === SPACE) j++;
      if (line.charCodeAt(j) !== 62) break;
      if (++depth > maxDepth) return this.stop(base + j);
      i = j + 1;
      if (isSpace(line.charCodeAt(i))) i++;
    }
    // Indentation, as columns from the quotes' content.
    let col = 0;
    let k = i;
    for (; isSpace(line.charCodeAt(k)); k++) col += line.charCodeAt(k) === TAB ? 4 - (col % 4) : 1;
    const inner = this.items.length ? this.items[this.items.length - 1] : 0;
    if (col >= inner + 4 && !this.prevText) {
      this.prevBlank = false; // indented code: nothing in it nests
      return;
    }
    let tail: ReturnType<typeof thematicTail> | null = null;
    const leaf = (at: number) => {
      const c = line.charCodeAt(at);
      if (c !== 45 && c !== 42 && c !== 95) return false;
      tail ??= thematicTail(line);
      if (at < tail.start || c !== tail.c) return false;
      let n = 0;
      for (let j = at; j < line.length && n < 3; j++) if (line.charCodeAt(j) === c) n++;
      return n >= 3;
    };
    const marked = markerWidth(line, k) > 0 && !leaf(k);
    if (marked || this.prevBlank) while (this.items.length && this.items[this.items.length - 1] > col) this.items.pop();
    let from = k; // where the line's inline text starts
    if (marked) {
      depth += this.items.length;
      for (;;) {
        const w = markerWidth(line, k);
        if (!w || leaf(k)) break;
        if (++depth > maxDepth) return this.stop(base + (w === 1 ? k : k + w - 1));
        let j = k + w;
        let gap = 0;
        while (j < line.length && isSpace(line.charCodeAt(j)) && gap <= 4) (j++, gap++);
        if (line.charCodeAt(k) !== 62) this.items.push(col + w + (gap >= 1 && gap <= 4 && j < line.length ? gap : 1));
        col += w + gap;
        k = j;
        if (gap > 4 || j >= line.length) break;
      }
      from = k;
      this.resetInline();
    } else if (!this.prevText || /^#{1,6}(?:[ \t]|$)/.test(line.slice(k, k + 7))) this.resetInline();
    // A fence: ``` (no ` after it) or ~~~.
    const f = line.charCodeAt(from);
    if ((f === 96 || f === 126) && line.charCodeAt(from + 1) === f && line.charCodeAt(from + 2) === f) {
      let n = 3;
      while (line.charCodeAt(from + n) === f) n++;
      if (f === 126 || line.indexOf("`", from + n) < 0) {
        this.fence = { c: f, n };
        this.resetInline();
        this.prevBlank = this.prevText = false;
        return;
      }
    }
    this.inline(line, from, base);
    this.prevBlank = false;
    this.prevText = true;
  }

  // stop escapes the marker at offset at: the rest of its line is text.
  stop(at: number) {
    this.escapes.push(at);
    this.resetInline();
    this.prevBlank = false;
    this.prevText = true;
  }

  // inline reads a line's text from offset from for emphasis and brackets,
  // skipping code spans.
  inline(line: string, from: number, base: number) {
    const special = /[\\`[\]*_]/g;
    special.lastIndex = from;
    if (!special.test(line)) return;
    const close = codeSpans(line, from);
    for (let p = special.lastIndex - 1; p < line.length;) {
      const c = line.charCodeAt(p);
      if (c === 92) {
        p += 2; // \ and the character it escapes
      } else if (c === 96) {
        let q = p;
        while (line.charCodeAt(q + 1) === 96) q++;
        p = (close.get(p) ?? q) + 1;
      } else if (c === 91) {
        if (this.brackets >= maxDepth) this.escapes.push(base + p);
        else this.brackets++;
        p++;
      } else if (c === 93) {
        if (this.brackets > 0) this.brackets--;
        p++;
      } else {
        let q = p + 1;
        while (line.charCodeAt(q) === c) q++;
        this.delimiters(line, p, q, base);
        p = q;
      }
      special.lastIndex = p;
      if (!special.test(line)) return;
      p = special.lastIndex - 1;
    }
  }

  // delimiters reads the run of * or _ from p to q (exclusive) as CommonMark
  // decides whether it may open or close emphasis, and escapes what would
  // nest past maxDepth: a run's characters past maxDepth, and a whole run
  // that would open past it.
  delimiters(line: string, p: number, q: number, base: number) {
    const c = line.charCodeAt(p);
    const before = p > 0 ? line.charCodeAt(p - 1) : NaN;
    const after = line.charCodeAt(q);
    const left = !isWhite(after) && (!isPunct(after) || isWhite(before) || isPunct(before));
    const right = !isWhite(before) && (!isPunct(before) || isWhite(after) || isPunct(after));
    const canOpen = c === 42 ? left : left && (!right || isPunct(before));
    const canClose = c === 42 ? right : right && (!left || isPunct(after));
    let n = Math.min(q - p, maxDepth);
    let escapeFrom = p + n;
    if (canClose) {
      let at = this.runs.length - 1;
      while (at >= 0 && this.runs[at].c !== c) at--;
      if (at >= 0) {
        for (const r of this.runs.splice(at)) this.weight -= r.n;
        n = 0;
      }
    }
    if (n > 0 && canOpen) {
      if (this.weight + n > maxDepth) escapeFrom = p;
      else {
        this.runs.push({ c, n });
        this.weight += n;
      }
    }
    for (let r = escapeFrom; r < q; r++) this.escapes.push(base + r);
  }

  // componentTags reads the tags of <Callout> and <Tabs> on a line, and
  // escapes an opening one that would start a component nested past
  // maxDepth: one at the start of the line's content, where marked's
  // components start. A closing tag closes the nearest open one of its name.
  componentTags(line: string, base: number) {
    if (!line.includes("<")) return;
    for (const m of line.matchAll(/<(\/?)(Callout|Tabs)\b/g)) {
      const name = m[2];
      if (m[1] === "/") {
        const at = this.open.lastIndexOf(name);
        if (at >= 0) this.open.length = at;
        continue;
      }
      if (!/^[ \t>]*(?:(?:[*+-]|\d{1,9}[.)])[ \t]+[ \t>]*)*$/.test(line.slice(0, m.index))) continue;
      if (this.open.length >= maxDepth) this.componentEscapes.push(base + m.index);
      this.open.push(name);
    }
  }
}

// codeSpans maps the offset of each backtick run in line (from from on)
// that opens a code span to the offset of the last backtick that closes it.
function codeSpans(line: string, from: number): Map<number, number> {
  const spans = new Map<number, number>();
  if (line.indexOf("`", from) < 0) return spans;
  const runs: [number, number][] = [];
  for (let p = from; p < line.length; p++) {
    const c = line.charCodeAt(p);
    if (c === 92) {
      p++;
      continue;
    }
    if (c !== 96) continue;
    let q = p;
    while (line.charCodeAt(q + 1) === 96) q++;
    runs.push([p, q - p + 1]);
    p = q;
  }
  const next = new Map<number, number>(); // run length -> index of the next run of that length
  const closer: number[] = new Array(runs.length).fill(-1);
  for (let r = runs.length - 1; r >= 0; r--) {
    closer[r] = next.get(runs[r][1]) ?? -1;
    next.set(runs[r][1], r);
  }
  for (let r = 0; r < runs.length; r++) {
    const c = closer[r];
    if (c < 0) continue;
    spans.set(runs[r][0], runs[c][0] + runs[c][1] - 1);
    r = c;
  }
  return spans;
}

// bound is text as marked may read it: each marker or delimiter past the
// bounds escaped. components says whether the text is a plan, whose
// <Callout> and <Tabs> are components.
export function bound(text: string, components = false): Bounded {
  const r = new Reader();
  for (let start = 0; start <= text.length;) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    r.line(text.slice(start, end), start, components);
    start = end + 1;
  }
  let at = r.escapes;
  if (r.componentEscapes.length) at = [...new Set([...at, ...r.componentEscapes])].sort((a, b) => a - b);
  if (!at.length) return { text, inserted: [] };
  const parts: string[] = [];
  const inserted: number[] = [];
  let last = 0;
  for (const p of at) {
    parts.push(text.slice(last, p));
    inserted.push(p + inserted.length);
    parts.push("\\");
    last = p;
  }
  parts.push(text.slice(last));
  return { text: parts.join(""), inserted };
}
