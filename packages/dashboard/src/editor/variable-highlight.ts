import {
  Decoration,
  type DecorationSet,
  type EditorView,
  MatchDecorator,
  ViewPlugin,
  type ViewUpdate,
} from "@codemirror/view";

// The same pattern as core's variables.ts: what is highlighted is exactly what the server fills in.
const VARIABLE = /\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}/g;

const decorator = new MatchDecorator({
  regexp: VARIABLE,
  decoration: Decoration.mark({ class: "cm-variable" }),
});

/** Marks every `{{ variable }}` in the visible part of the document. */
export const variableHighlight = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = decorator.createDeco(view);
    }
    update(update: ViewUpdate) {
      this.decorations = decorator.updateDeco(update, this.decorations);
    }
  },
  { decorations: (plugin) => plugin.decorations },
);
