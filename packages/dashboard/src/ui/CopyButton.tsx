import { useEffect, useRef, useState } from "react";
import { copyText } from "./clipboard";
import { shortHash } from "./format";

type CopyState = "idle" | "copied" | "failed";

function useCopy(text: string) {
  const [state, setState] = useState<CopyState>("idle");
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const copy = async () => {
    const ok = await copyText(text);
    setState(ok ? "copied" : "failed");
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setState("idle"), 2000);
  };
  return { state, copy };
}

/** The confirmation is a status next to the button, so the button keeps its name and focus. */
function CopyStatus({ state }: { state: CopyState }) {
  return (
    <span className="copied" role="status">
      {state === "copied" ? "Copied" : state === "failed" ? "Could not copy: select and copy by hand" : ""}
    </span>
  );
}

interface CopyButtonProps {
  text: string;
  /** The button's name; "Copy" unless several on a page need telling apart. */
  label?: string;
  small?: boolean;
  /** The accessible name, when the visible label alone would not tell several buttons apart. */
  name?: string;
}

export function CopyButton({ text, label = "Copy", small, name }: CopyButtonProps) {
  const { state, copy } = useCopy(text);
  return (
    <span className="row">
      <button type="button" className={small ? "button button-small" : "button"} onClick={copy} aria-label={name}>
        {label}
      </button>
      <CopyStatus state={state} />
    </span>
  );
}

/** A hash prefix that copies the full hash. */
export function CopyHash({ hash }: { hash: string }) {
  const { state, copy } = useCopy(hash);
  const short = shortHash(hash);
  return (
    <span className="row">
      <button
        type="button"
        className="copy-hash"
        onClick={copy}
        aria-label={`Copy full hash ${short}`}
        title="Copy the full hash"
      >
        {short}
      </button>
      <CopyStatus state={state} />
    </span>
  );
}
