/**
 * Each screen's requests, started by its route while the screen's code is fetched, instead of by its first
 * render after that code has come: the data and the code arrive together. Nothing is asked before the
 * session is known to be signed in (a visitor is sent to Sign in, and asks for nothing else), and nothing
 * here waits: the screen reads the same queries and shows their state as before.
 */
import { FULL_HASH } from "@promptstore/core/version-ref";
import type { QueryClient } from "@tanstack/react-query";
import type { LoaderFunctionArgs, Params } from "react-router";
import { connectionsQuery } from "../api/connection-queries";
import { promptPageQuery, promptViewQuery, sdkQuery, sessionQuery, versionsQuery } from "../api/queries";
import { queryClient } from "../api/query-client";
import { labelSettingsQuery } from "../api/release-queries";
import { comparedVersions } from "../history/compared";
import { shownVersion } from "../preview/shown-version";
import { PAGE_SIZE, pageParam, searchText } from "../prompts/paging";

type Start = (client: QueryClient, params: Params, search: URLSearchParams) => Promise<unknown>;

/** A route's loader that starts `start` once signed in, and returns at once. */
function prefetching(start: Start) {
  return ({ params, request }: LoaderFunctionArgs) => {
    void queryClient
      .ensureQueryData(sessionQuery)
      .then((session) =>
        session && !session.user.must_change_password
          ? start(queryClient, params, new URL(request.url).searchParams)
          : undefined,
      )
      .catch(() => {
        // The screen asks again itself, and shows what went wrong.
      });
    return null;
  };
}

const ids = (params: Params) => [params.projectId ?? "", params.promptId ?? ""] as const;

export const prefetchSession = prefetching(async () => undefined);

/** The page of the search the address names, as PromptList asks for it. */
export const prefetchPromptList = prefetching((client, params, search) => {
  const q = searchText(search.get("q") ?? "");
  return client.prefetchQuery(promptPageQuery(params.projectId ?? "", q, pageParam(search.get("page")), PAGE_SIZE));
});

/** The prompt's latest version: its header shows it, and the editor edits it. */
export const prefetchPrompt = prefetching((client, params) => {
  const [projectId, promptId] = ids(params);
  return client.prefetchQuery(promptViewQuery(projectId, promptId, "latest", false));
});

/** Under the editor, the playground lists the versions and the model connections. */
export const prefetchEditor = prefetching((client, params) => {
  const [projectId, promptId] = ids(params);
  return Promise.all([
    client.prefetchQuery(versionsQuery(projectId, promptId)),
    client.prefetchQuery(connectionsQuery(projectId)),
  ]);
});

/**
 * The versions, the project's labels, and the two versions compared: the ones the address names at once,
 * beside the list (a hash names one version whatever the list says), then whichever the list settles on.
 */
export const prefetchHistory = prefetching(async (client, params, search) => {
  const [projectId, promptId] = ids(params);
  void client.prefetchQuery(labelSettingsQuery(projectId));
  for (const named of [search.get("from"), search.get("to")]) {
    if (named !== null && FULL_HASH.test(named)) {
      void client.prefetchQuery(promptViewQuery(projectId, promptId, named, false));
    }
  }
  const list = await client.ensureQueryData(versionsQuery(projectId, promptId));
  const { from, to } = comparedVersions(list, search);
  return Promise.all(
    [from, to].map((version) =>
      version === null ? null : client.prefetchQuery(promptViewQuery(projectId, promptId, version, false)),
    ),
  );
});

/** The versions, and the one shown, assembled. */
export const prefetchPreview = prefetching(async (client, params, search) => {
  const [projectId, promptId] = ids(params);
  void client.prefetchQuery(sdkQuery);
  const list = await client.ensureQueryData(versionsQuery(projectId, promptId));
  const { version, guard } = shownVersion(list, search);
  return client.prefetchQuery(promptViewQuery(projectId, promptId, version, guard));
});
