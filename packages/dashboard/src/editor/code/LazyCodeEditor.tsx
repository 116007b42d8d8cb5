import { Suspense } from "react";
import { preloadable } from "../../ui/preloadable";
import type { CodeEditorProps } from "./CodeEditor";

const CodeEditor = preloadable(() => import("./CodeEditor"));

/** Fetches CodeMirror ahead of the first editor (the router does, with the screen's own code). */
export const preloadCodeEditor = CodeEditor.preload;

/** CodeMirror, with the text shown (not editable) while its chunk loads, so the page does not jump. */
export function LazyCodeEditor(props: CodeEditorProps) {
  return (
    <Suspense
      fallback={
        <div className="code-editor-fallback" aria-busy="true" role="status" aria-label={`${props.label}, loading`}>
          {props.value || "Loading editor…"}
        </div>
      }
    >
      <CodeEditor {...props} />
    </Suspense>
  );
}
