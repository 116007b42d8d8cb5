import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Libraries in chunks of their own: named in the build report, and cached by browsers across releases of
// the app's own code. All four are needed by the first screen anyway; CodeMirror and jsdiff stay in the
// lazy chunks of the routes that use them.
const vendorChunks = [
  { name: "react", test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
  { name: "router", test: /node_modules[\\/]react-router[\\/]/ },
  { name: "query", test: /node_modules[\\/]@tanstack[\\/]/ },
  { name: "zod", test: /node_modules[\\/]zod[\\/]/ },
];

// `npm run dev` proxies the API to a server started with `npm start` (port 3000).
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: "dist",
    sourcemap: true,
    target: "es2022",
    rolldownOptions: { output: { codeSplitting: { groups: vendorChunks } } },
  },
  server: { proxy: { "/api": "http://127.0.0.1:3000", "/healthz": "http://127.0.0.1:3000" } },
});
