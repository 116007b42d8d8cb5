/**
 * The one TanStack Query client. A 401 from any query or mutation means the session ended: the
 * session is forgotten and the router (registered by `onUnauthorized`) sends the user to Sign in.
 */
import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { isApiError } from "./client";
import { keys } from "./queries";

let unauthorizedHandler: (() => void) | null = null;

export function onUnauthorized(handler: () => void): void {
  unauthorizedHandler = handler;
}

/** A 401 from a request made outside the query cache (a run's stream) ends the session the same way. */
export function sessionEnded(error: unknown): void {
  if (!isApiError(error) || error.status !== 401) return;
  queryClient.setQueryData(keys.session, null);
  unauthorizedHandler?.();
}

export const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError: sessionEnded }),
  mutationCache: new MutationCache({
    onError: (error, _variables, _context, mutation) => {
      if (mutation.meta?.handles401 !== true) sessionEnded(error);
    },
  }),
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      // A 4xx will answer the same again; only a lost connection or a 5xx is worth retrying.
      retry: (count, error) => count < 2 && (!isApiError(error) || error.status === 0 || error.status >= 500),
    },
    mutations: { retry: false },
  },
});
