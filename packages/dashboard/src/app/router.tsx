import { lazy } from "react";
import { createBrowserRouter, Navigate, Outlet, ScrollRestoration } from "react-router";
import { onUnauthorized } from "../api/query-client";
import { SignIn } from "../auth/SignIn";
import { PromptList } from "../prompts/PromptList";
import { NotFound } from "../shell/NotFound";
import { Home } from "./Home";
import { Layout } from "./Layout";
import { ProjectLayout } from "./ProjectLayout";
import { RequireSession } from "./RequireSession";
import { RouteError } from "./RouteError";

// The first screens (sign in, the prompt list) are in the entry chunk; everything else loads on the way,
// so CodeMirror and jsdiff are fetched only when the editor or the history opens.
const Account = lazy(() => import("../auth/Account"));
const NewPrompt = lazy(() => import("../prompts/NewPrompt"));
const PromptPage = lazy(() => import("../editor/PromptPage"));
const Editor = lazy(() => import("../editor/Editor"));
const History = lazy(() => import("../history/History"));
const Preview = lazy(() => import("../preview/Preview"));
const Settings = lazy(() => import("../settings/Settings"));
const Audit = lazy(() => import("../settings/Audit"));
const Releases = lazy(() => import("../releases/Releases"));
const AcceptInvitation = lazy(() => import("../auth/AcceptInvitation"));

function Root() {
  return (
    <>
      <ScrollRestoration />
      <Outlet />
    </>
  );
}

export const router = createBrowserRouter([
  {
    element: <Root />,
    errorElement: <RouteError />,
    children: [
      { path: "sign-in", element: <SignIn /> },
      // Outside RequireSession: whoever opens the link may not have an account yet.
      { path: "invite", element: <AcceptInvitation /> },
      {
        element: <RequireSession />,
        children: [
          {
            element: <Layout />,
            children: [
              { index: true, element: <Home /> },
              { path: "account", element: <Account /> },
              {
                path: "p/:projectId",
                element: <ProjectLayout />,
                children: [
                  { index: true, element: <Navigate to="prompts" replace /> },
                  { path: "prompts", element: <PromptList /> },
                  { path: "prompts/new", element: <NewPrompt /> },
                  {
                    path: "prompts/:promptId",
                    element: <PromptPage />,
                    children: [
                      { index: true, element: <Editor /> },
                      { path: "history", element: <History /> },
                      { path: "preview", element: <Preview /> },
                    ],
                  },
                  { path: "releases", element: <Releases /> },
                  { path: "settings", element: <Settings /> },
                  { path: "audit", element: <Audit /> },
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
