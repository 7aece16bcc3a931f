// Small inline icons for people, groups and company cards: drawn in SVG with the text colour
// (an emoji may be missing from the system font), hidden from assistive tech because a word
// always goes with them.

const NS = "http://www.w3.org/2000/svg";

const PATHS: Record<IconName, string[]> = {
  // A head and shoulders.
  person: ["M8 8a3 3 0 1 0 0-6 3 3 0 0 0 0 6z", "M2.5 14.5c0-3 2.5-5 5.5-5s5.5 2 5.5 5z"],
  // Two people, one behind the other.
  group: [
    "M6 7.5a2.6 2.6 0 1 0 0-5.2 2.6 2.6 0 0 0 0 5.2z",
    "M1 14c0-2.7 2.2-4.6 5-4.6s5 1.9 5 4.6z",
    "M11.2 7.3a2.2 2.2 0 1 0 0-4.4 2.2 2.2 0 0 0 0 4.4z",
    "M11.8 8.8c1.9.3 3.2 1.9 3.2 4h-3.2c-.2-1.5-.9-2.8-2-3.6.6-.3 1.3-.4 2-.4z",
  ],
  // A building with windows.
  company: ["M3 14.5V2.5h7v12zM4.5 4h1.5v1.5H4.5zm2.5 0h1.5v1.5H7zM4.5 7h1.5v1.5H4.5zM7 7h1.5v1.5H7zm-1.5 4.5h2v3h-2z", "M10.5 6.5h3v8h-3z"],
  // A speech bubble: someone who wrote.
  recent: ["M2 3.5h12v8H7l-3 3v-3H2z"],
};

export type IconName = "person" | "group" | "company" | "recent";

/** A 16-pixel icon in the current text colour. */
export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("width", "16");
  svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `icon icon-${name}`);
  for (const d of PATHS[name]) {
    const path = document.createElementNS(NS, "path");
    path.setAttribute("d", d);
    path.setAttribute("fill", "currentColor");
    if (name === "company") path.setAttribute("fill-rule", "evenodd");
    svg.appendChild(path);
  }
  return svg;
}
