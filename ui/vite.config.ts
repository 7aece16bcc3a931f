// Vite builds the settings window into ui/dist, which src-tauri embeds (frontendDist).
import { defineConfig } from "vite";

export default defineConfig({
  // Relative asset paths: the app serves dist from its own scheme, the tests from a plain
  // http server; neither is rooted where a bare "/" would point.
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  server: { port: 5173, strictPort: true },
});
