/**
 * CodeMirror 6 behind a small controlled-input API. Loaded lazily (it is most of the editor's weight),
 * so the prompt list and sign-in never fetch it.
 *
 * It lives in a shadow root. CodeMirror injects its styles with style-mod, which writes a `<style>`
 * element into a document (refused by our CSP, `style-src 'self'`) but uses a constructed, adopted
 * stylesheet in a shadow root, which CSP allows. Our own rules for it come from a CSS file, adopted
 * the same way.
 */
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { json, jsonParseLinter } from "@codemirror/lang-json";
import { markdownKeymap, markdownLanguage } from "@codemirror/lang-markdown";
import { syntaxHighlighting } from "@codemirror/language";
import { linter } from "@codemirror/lint";
import { Compartment, EditorState, type Extension } from "@codemirror/state";
import { drawSelection, EditorView, keymap, placeholder as placeholderText } from "@codemirror/view";
import { classHighlighter } from "@lezer/highlight";
import { useEffect, useRef } from "react";
import shadowCss from "./code-editor-shadow.css?inline";
import { type IncludeHelp, includeSupport, pinsChanged } from "./include-support";
import { variableHighlight } from "./variable-highlight";

export interface CodeEditorProps {
  value: string;
  onChange: (value: string) => void;
  language: "markdown" | "json";
  /** The accessible name of the editable area. */
  label: string;
  readOnly?: boolean;
  invalid?: boolean;
  /**
   * Read after the name (the hint or the error). A text, not ids: `aria-describedby` cannot point
   * out of the shadow root.
   */
  description?: string | undefined;
  placeholder?: string;
  /** Includes (docs/includes.md): chips, Ctrl/Cmd-click to open, completion. Given when the editor is made. */
  includes?: IncludeHelp | undefined;
  /** Changes when the includes' pins change, so the chips are drawn again. */
  pinsKey?: string | undefined;
}

// Alt+ArrowUp/Down move the whole section in the prompt editor, so CodeMirror must not take them for
// moving lines. Tab is left to the browser too: it moves focus out instead of trapping the keyboard.
const keys = defaultKeymap.filter((binding) => binding.key !== "Alt-ArrowUp" && binding.key !== "Alt-ArrowDown");

const theme = EditorView.theme({
  "&": {
    backgroundColor: "var(--surface)",
    color: "var(--text)",
    border: "1px solid var(--border-strong)",
    borderRadius: "var(--radius-sm)",
    fontSize: "var(--text-sm)",
  },
  "&.cm-focused": {
    outline: "none",
    borderColor: "var(--accent)",
    boxShadow: "0 0 0 3px color-mix(in srgb, var(--accent) 25%, transparent)",
  },
  ".cm-scroller": { fontFamily: "var(--font-mono)", lineHeight: "1.6", minHeight: "88px", maxHeight: "560px" },
  ".cm-content": { padding: "8px 0", caretColor: "var(--text)" },
  ".cm-line": { padding: "0 12px" },
  ".cm-cursor": { borderLeftColor: "var(--text)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "color-mix(in srgb, var(--accent) 25%, transparent) !important",
  },
  ".cm-placeholder": { color: "var(--text-3)" },
});

/**
 * Typing over a selection is done here rather than by the browser: replacing selected, coloured
 * tokens, Chromium keeps their look with an inline `style` on the new text, which our CSP refuses
 * (and reports in the console). CodeMirror draws the result either way.
 */
const typeOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== "insertText" || event.isComposing || !event.data || view.state.readOnly) return false;
    if (view.state.selection.ranges.every((range) => range.empty)) return false;
    event.preventDefault();
    view.dispatch(view.state.replaceSelection(event.data), { userEvent: "input.type", scrollIntoView: true });
    return true;
  },
});

const parseJson = jsonParseLinter();
/**
 * JSON's syntax errors, marked in the text. An empty field is no error: both JSON fields (tools, model settings)
 * take it for "none", and the card says so; marked, it showed a red point under a valid field.
 */
const jsonLinter = linter((view) => (view.state.doc.toString().trim() === "" ? [] : parseJson(view)), { delay: 300 });

function languageOf(language: CodeEditorProps["language"]): Extension {
  return language === "json" ? [json(), jsonLinter] : [markdownLanguage, keymap.of(markdownKeymap), variableHighlight];
}

function ariaAttributes(props: Pick<CodeEditorProps, "label" | "description" | "invalid" | "readOnly">) {
  // tabindex: a long text scrolls inside the editor, and a scrolling region must be reachable by keyboard
  // (axe: scrollable-region-focusable); a contenteditable alone does not count as focusable to axe.
  const attributes: Record<string, string> = { "aria-label": props.label, "aria-multiline": "true", tabindex: "0" };
  if (props.description) attributes["aria-description"] = props.description;
  if (props.invalid) attributes["aria-invalid"] = "true";
  if (props.readOnly) attributes["aria-readonly"] = "true";
  return attributes;
}

let sharedSheet: CSSStyleSheet | null = null;
function editorSheet(): CSSStyleSheet {
  if (!sharedSheet) {
    sharedSheet = new CSSStyleSheet();
    sharedSheet.replaceSync(shadowCss);
  }
  return sharedSheet;
}

export default function CodeEditor(props: CodeEditorProps) {
  const { value, language, readOnly = false, placeholder } = props;
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;
  /**
   * The texts handed to onChange that React has not yet rendered back as `value`. A render can lag behind
   * typing (a busy page: the playground re-renders with every keystroke), and then brings back an older
   * text of our own: that is an echo, not a reset, and must not overwrite what was typed since.
   * A list, not a set: a set hashes each text, all 250 KB of it at every keystroke, where comparing the same
   * string object back costs nothing.
   */
  const emitted = useRef<string[]>([]);
  const lastEmitted = useRef<string | null>(null);
  const dynamic = useRef(new Compartment());
  const includes = useRef(props.includes);
  includes.current = props.includes;
  const attributes = ariaAttributes(props);
  const attributesKey = JSON.stringify(attributes);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the view is made once; later props are applied below
  useEffect(() => {
    if (!host.current) return;
    // delegatesFocus: focusing the host (as the section editor does after a move) focuses the text.
    const shadow = host.current.shadowRoot ?? host.current.attachShadow({ mode: "open", delegatesFocus: true });
    shadow.adoptedStyleSheets = [editorSheet()];
    const container = document.createElement("div");
    shadow.append(container);
    const editor = new EditorView({
      root: shadow,
      parent: container,
      state: EditorState.create({
        doc: value,
        extensions: [
          history(),
          drawSelection(),
          keymap.of([...keys, ...historyKeymap]),
          EditorView.lineWrapping,
          typeOverSelection,
          syntaxHighlighting(classHighlighter),
          theme,
          languageOf(language),
          language === "markdown" && props.includes ? includeSupport(() => includes.current) : [],
          placeholder ? placeholderText(placeholder) : [],
          dynamic.current.of([EditorState.readOnly.of(readOnly), EditorView.contentAttributes.of(attributes)]),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) {
              const text = update.state.doc.toString();
              emitted.current.push(text);
              lastEmitted.current = text;
              onChange.current(text);
            }
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      container.remove();
      view.current = null;
    };
  }, []);

  // A value set from outside (reset, load) replaces the document; typing does not come back through here.
  useEffect(() => {
    const editor = view.current;
    if (emitted.current.includes(value)) {
      // Typing coming back, perhaps late: once the latest text is back, nothing older is still on its way.
      // (The same string object comes back: comparing it costs nothing, even for a 250 KB section.)
      if (value === lastEmitted.current) emitted.current = [];
      return;
    }
    emitted.current = [];
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: attributesKey stands for attributes
  useEffect(() => {
    view.current?.dispatch({
      effects: dynamic.current.reconfigure([
        EditorState.readOnly.of(readOnly),
        EditorView.contentAttributes.of(attributes),
      ]),
    });
  }, [readOnly, attributesKey]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the key stands for the pins, read through the ref
  useEffect(() => {
    view.current?.dispatch({ effects: pinsChanged.of(null) });
  }, [props.pinsKey]);

  return <div ref={host} className="code-editor" />;
}
