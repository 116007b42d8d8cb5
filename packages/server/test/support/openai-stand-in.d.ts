/** Types of openai-stand-in.js (plain JavaScript, so that the bench, run by Node without a build, uses it too). */
import type { IncomingMessage } from "node:http";

export interface StandInRequest {
  headers: IncomingMessage["headers"];
  body: Record<string, any>;
}

/** What a `compute` behaviour answers, from the request alone. */
export interface ComputedAnswer {
  content?: string;
  toolCalls?: { id: string; name: string; argumentPieces: string[] }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/** What the stand-in answers for one model name. */
export type Behaviour = (
  | {
      kind: "stream";
      /** Text pieces, each sent as one chunk (after `delayMs`). */
      pieces?: string[];
      /** Tool calls, each sent as a first piece (id, name) and its arguments in `argumentPieces`. */
      toolCalls?: { id: string; name: string; argumentPieces: string[] }[];
      /** Before each chunk after the first (the role chunk). */
      delayMs?: number;
      /** Before the first piece instead of `delayMs`: the model's time to first token. */
      firstDelayMs?: number;
      /** Before the first piece, after `firstDelayMs`: the answer waits until the test settles this. */
      until?: Promise<unknown>;
      /** Destroys the socket after this many chunks: no [DONE], no usage. */
      breakAfter?: number;
      /** Sends this line instead of a chunk after the pieces (a provider that sends garbage). */
      garbage?: string;
      usage?: { prompt_tokens: number; completion_tokens: number };
    }
  | { kind: "hang" }
  /** Content deltas of `deltaBytes` characters (16), without end; a pause of `delayMs` (0) every 64. */
  | { kind: "endless"; deltaBytes?: number; delayMs?: number }
  /** One `data:` line that never ends: 64 KiB blocks with a pause of `delayMs` (0) between. */
  | { kind: "no_newlines"; delayMs?: number }
  /** A comment line every `intervalMs` (500), and nothing else, forever. */
  | { kind: "drip"; intervalMs?: number }
  | { kind: "error"; status: 401 | 404 | 429 | 500 | 400; message?: string; retryAfter?: number }
  /**
   * The answer as a function of the request's body alone (deterministic: the same messages, the same answer),
   * streamed `pieceChars` (8) at a time; usage from the sizes unless the answer gives it.
   */
  | {
      kind: "compute";
      answer: (body: Record<string, any>) => ComputedAnswer;
      pieceChars?: number;
      delayMs?: number;
      firstDelayMs?: number;
      /** As `stream`'s: the answers wait until the test settles this. */
      until?: Promise<unknown>;
    }
) & {
  /** This behaviour for the model's first `times` requests, then `after` (a 500 when none). */
  times?: number;
  after?: Behaviour;
};

export interface StandIn {
  url: string;
  /** The base URL a connection is given: `<url>/v1`. */
  baseUrl: string;
  requests: StandInRequest[];
  /** When each content piece was written (performance.now() of this process), in order. */
  sent: number[];
  /** Sockets open now. */
  openConnections(): number;
  /** Resolves once no socket is open (or rejects after `timeoutMs`). */
  waitForNoConnections(timeoutMs?: number): Promise<void>;
  /** The behaviour for a model name; unknown models get a 404 as OpenAI answers one. */
  on(model: string, behaviour: Behaviour): void;
  /** The key the stand-in accepts; any other is a 401. */
  readonly apiKey: string;
  close(): Promise<void>;
}

export function startStandIn(apiKey?: string): Promise<StandIn>;
