import {
  Decoration,
  type DecorationSet,
  type EditorView,
  MatchDecorator,
  ViewPlugin,
  type ViewUpdate,
} from "@codemirror/view";
import { PLACEHOLDER_PATTERN } from "@promptstore/core/prompts/variables";

// Core's pattern (a copy of it: the decorator moves its lastIndex): what is highlighted is what the server fills in.
const VARIABLE = new RegExp(PLACEHOLDER_PATTERN);

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
