import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// `npm run dev` proxies the API to a server started with `npm start` (port 3000).
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", sourcemap: true, target: "es2022" },
  server: { proxy: { "/api": "http://127.0.0.1:3000", "/healthz": "http://127.0.0.1:3000" } },
});
