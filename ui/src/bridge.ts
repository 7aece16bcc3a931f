// The only way the window talks to the app: `window.__TAURI__` (the app sets
// `withGlobalTauri`), typed by the contract's command list. Tests put a fake in its place.

import type { Command, EventName } from "./commands";

interface TauriGlobal {
  core: { invoke(cmd: string, args?: Record<string, unknown>): Promise<unknown> };
  event: {
    listen(name: string, cb: (e: { payload: unknown }) => void): Promise<() => void>;
  };
}

declare global {
  interface Window {
    __TAURI__?: TauriGlobal;
  }
}

/** A failed command, with the app's message (commands reject with `{ message }`). */
export class BridgeError extends Error {}

function tauri(): TauriGlobal {
  const t = window.__TAURI__;
  if (!t) {
    throw new BridgeError("This page runs inside Tidings.app; the app bridge is missing.");
  }
  return t;
}

/** Call a command; a rejection becomes a `BridgeError` with the app's message. */
export async function call<T>(cmd: Command, args?: Record<string, unknown>): Promise<T> {
  try {
    return (await tauri().core.invoke(cmd, args)) as T;
  } catch (e) {
    throw new BridgeError(messageOf(e));
  }
}

/** Run `cb` with each payload of `name`. */
export function on<T>(name: EventName, cb: (payload: T) => void): Promise<() => void> {
  return tauri().event.listen(name, (e) => cb(e.payload as T));
}

/** The human message of whatever a command rejected with. */
export function messageOf(e: unknown): string {
  if (typeof e === "string") return e;
  if (e && typeof e === "object" && "message" in e) return String(e.message);
  return String(e);
}
