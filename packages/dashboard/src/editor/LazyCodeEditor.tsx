import { lazy, Suspense } from "react";
import type { CodeEditorProps } from "./CodeEditor";

const CodeEditor = lazy(() => import("./CodeEditor"));

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
