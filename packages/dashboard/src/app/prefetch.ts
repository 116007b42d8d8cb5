/**
 * Each screen's requests, started by its route while the screen's code is fetched, instead of by its first
 * render after that code has come: the data and the code arrive together. Nothing reaches the cache before
 * the session is known to be signed in (a visitor is sent to Sign in, and sees nothing else; only the list, the
 * first screen, asks before then), and nothing here waits: the screen reads the same queries and shows their
 * state as before.
 */
import { FULL_HASH } from "@promptstore/core/version-ref";
import type { QueryClient } from "@tanstack/react-query";
import type { LoaderFunctionArgs, Params } from "react-router";
import { connectionsQuery } from "../api/connection-queries";
import {
  fetchPromptPage,
  promptPageQuery,
  promptViewQuery,
  sdkQuery,
  sessionQuery,
  versionsQuery,
} from "../api/queries";
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
function listPageOf(params: Params, search: URLSearchParams) {
  return [params.projectId ?? "", searchText(search.get("q") ?? ""), pageParam(search.get("page")), PAGE_SIZE] as const;
}

/**
 * The list's page. When the app has just loaded (the session not yet known), its request leaves at once, beside
 * the session's: the list is the first screen, and waiting put the session's round trip and a render (50 to 90
 * ms) ahead of it. Its answer reaches the cache only once the session is known to be signed in; a visitor's (a
 * 401) is dropped, so it neither shows as an error nor ends a session.
 */
export const prefetchPromptList = (args: LoaderFunctionArgs) => {
  const page = listPageOf(args.params, new URL(args.request.url).searchParams);
  const early = queryClient.getQueryData(sessionQuery.queryKey) === undefined ? fetchPromptPage(...page) : undefined;
  early?.catch(() => {
    // A visitor's: dropped. A signed-in user's failure reaches the cache below, which shows it.
  });
  return prefetching((client) =>
    client.prefetchQuery(early ? { ...promptPageQuery(...page), queryFn: () => early } : promptPageQuery(...page)),
  )(args);
};

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
