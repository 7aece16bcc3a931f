// What every section shares: the latest data from the app and the way to hand back a new
// SettingsView after a command, so all sections (and the first-run sheet) stay in step.

import type { Delivery, SettingsView, State } from "./model";

export interface Model {
  state: State | null;
  settings: SettingsView | null;
  activity: Delivery[];
}

export interface Ctx {
  readonly model: Model;
  /** A command returned a new SettingsView: store it and re-render. */
  applySettings(settings: SettingsView): void;
  /** New activity (after a clear). */
  applyActivity(activity: Delivery[]): void;
}

/** One section of the window: its panel and how it follows the data. */
export interface Section {
  id: string;
  title: string;
  panel: HTMLElement;
  update(model: Model): void;
}
