import type { ComponentType } from "react";
import {
  createBrowserRouter,
  Navigate,
  Outlet,
  ScrollRestoration,
  type ShouldRevalidateFunctionArgs,
} from "react-router";
import { onUnauthorized } from "../api/query-client";
import { SignIn } from "../auth/SignIn";
import { PromptList } from "../prompts/PromptList";
import { NotFound } from "../shell/NotFound";
import { Loading } from "../ui/States";
import { Home } from "./Home";
import { Layout } from "./Layout";
import { ProjectLayout } from "./ProjectLayout";
import {
  prefetchEditor,
  prefetchHistory,
  prefetchPreview,
  prefetchPrompt,
  prefetchPromptList,
  prefetchSession,
} from "./prefetch";
import { RequireSession } from "./RequireSession";
import { RouteError } from "./RouteError";

interface Screen {
  default: ComponentType;
  /** Fetches the lazy parts the screen shows at once (CodeMirror, the diff, the playground). */
  preload?: () => Promise<unknown>;
}

/**
 * The first screens (sign in, the prompt list) are in the entry chunk; every other one is a route's `lazy`:
 * the router fetches the code of all the routes of an address at once, with their loaders (which start the
 * screen's requests, ./prefetch.ts), and renders when it has it. (As `React.lazy` components, each level
 * showed a Suspense fallback, and React holds content back for 300 ms after a fallback: the editor's
 * address waited twice that, whatever the prompt's size.) `also` names the chunks of the screen's lazy
 * parts, fetched beside its own rather than after it.
 */
function screen(load: () => Promise<Screen>, ...also: (() => Promise<unknown>)[]) {
  return async () => {
    const [module] = await Promise.all([load(), ...also.map((fetch) => fetch())]);
    await module.preload?.();
    return { Component: module.default };
  };
}

/** What shows while the first screen's code comes (the same as while the session is read). */
function BootFallback() {
  return (
    <div className="auth-page" aria-busy="true">
      <Loading />
    </div>
  );
}

function Root() {
  return (
    <>
      <ScrollRestoration />
      <Outlet />
    </>
  );
}

/**
 * The list writes its search and page to the address as they change, a navigation per key: its loader asked the
 * server for each one ("S", "Su", …), past the pause the list waits for before it sends a search, and each
 * search reads every name of the project. Arriving at the list still prefetches; once there, the list asks.
 */
function samePathStays({ currentUrl, nextUrl }: ShouldRevalidateFunctionArgs): boolean {
  return currentUrl.pathname !== nextUrl.pathname;
}

export const router = createBrowserRouter([
  {
    element: <Root />,
    errorElement: <RouteError />,
    loader: prefetchSession,
    hydrateFallbackElement: <BootFallback />,
    children: [
      { path: "sign-in", element: <SignIn /> },
      // Outside RequireSession: whoever opens the link may not have an account yet.
      { path: "invite", lazy: screen(() => import("../auth/AcceptInvitation")) },
      {
        element: <RequireSession />,
        children: [
          // MCP sign-in's consent: a page of its own (no project frame), after the dashboard's sign-in.
          { path: "oauth/consent", lazy: screen(() => import("../oauth/Consent")) },
          {
            element: <Layout />,
            children: [
              { index: true, element: <Home /> },
              { path: "account", lazy: screen(() => import("../auth/Account")) },
              {
                path: "p/:projectId",
                element: <ProjectLayout />,
                children: [
                  { index: true, element: <Navigate to="prompts" replace /> },
                  {
                    path: "prompts",
                    element: <PromptList />,
                    loader: prefetchPromptList,
                    shouldRevalidate: samePathStays,
                  },
                  { path: "prompts/new", lazy: screen(() => import("../prompts/NewPrompt")) },
                  {
                    path: "prompts/:promptId",
                    lazy: screen(() => import("../editor/PromptPage")),
                    loader: prefetchPrompt,
                    children: [
                      {
                        index: true,
                        lazy: screen(
                          () => import("../editor/Editor"),
                          () => import("../editor/code/CodeEditor"),
                          () => import("../playground/Playground"),
                        ),
                        loader: prefetchEditor,
                      },
                      {
                        path: "history",
                        lazy: screen(
                          () => import("../history/History"),
                          () => import("../history/DiffView"),
                        ),
                        loader: prefetchHistory,
                      },
                      { path: "preview", lazy: screen(() => import("../preview/Preview")), loader: prefetchPreview },
                      { path: "evaluate", lazy: screen(() => import("../evaluations/Evaluate")) },
                      { path: "production", lazy: screen(() => import("../production/Production")) },
                      { path: "includes", lazy: screen(() => import("../includes/Includes")) },
                    ],
                  },
                  { path: "releases", lazy: screen(() => import("../releases/Releases")) },
                  { path: "datasets", lazy: screen(() => import("../datasets/Datasets")) },
                  { path: "datasets/:datasetId", lazy: screen(() => import("../datasets/DatasetPage")) },
                  { path: "settings", lazy: screen(() => import("../settings/Settings")) },
                  { path: "audit", lazy: screen(() => import("../settings/Audit")) },
                  { path: "*", element: <NotFound /> },
                ],
              },
              { path: "*", element: <NotFound /> },
            ],
          },
        ],
      },
    ],
  },
]);

// A 401 from any request: the session ended. Sign in, then come back here.
onUnauthorized(() => {
  const { pathname, search, hash } = router.state.location;
  if (pathname === "/sign-in") return;
  const next = new URLSearchParams({ next: pathname + search + hash }).toString();
  void router.navigate(`/sign-in?${next}`, { replace: true });
});
