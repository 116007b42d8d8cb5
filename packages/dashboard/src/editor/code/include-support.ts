/**
 * Includes in the section editor (docs/includes.md): each `{{> prompt-id#Section@pointer}}` is a chip naming
 * what it follows and its pin, Ctrl/Cmd-click on it opens the included prompt, and typing after `{{>` completes
 * prompt ids, after `@` labels, after `#` section titles. What to offer and where to go come from the page
 * (`IncludeHelp`), read through a getter so the editor, made once, always asks the page as it is now.
 */
import {
  autocompletion,
  type Completion,
  type CompletionContext,
  type CompletionResult,
} from "@codemirror/autocomplete";
import { type Extension, StateEffect } from "@codemirror/state";
import {
  Decoration,
  type DecorationSet,
  EditorView,
  MatchDecorator,
  ViewPlugin,
  type ViewUpdate,
  WidgetType,
} from "@codemirror/view";
import { INCLUDE_PATTERN, parseInclude } from "@promptstore/core/prompts/includes";

export interface IncludeHelp {
  /** Prompts of the project whose id or name holds `q`. */
  prompts(q: string): Promise<{ id: string; name: string }[]>;
  /** Labels of a prompt (production and latest first). */
  labels(promptId: string): Promise<string[]>;
  /** The titles of a prompt's enabled sections. */
  sections(promptId: string): Promise<string[]>;
  /** The pin of each include kept from the version edited, by reference. */
  pins(): Readonly<Record<string, string>>;
  /** Opens the included prompt. */
  open(promptId: string): void;
}

/** Tells the chips that the pins changed (a save pinned the includes). */
export const pinsChanged = StateEffect.define<null>();

class PinWidget extends WidgetType {
  constructor(readonly text: string) {
    super();
  }
  override eq(other: PinWidget) {
    return other.text === this.text;
  }
  toDOM() {
    const span = document.createElement("span");
    span.className = "cm-include-pin";
    // The list under the editor says the same to a screen reader, with a link.
    span.setAttribute("aria-hidden", "true");
    span.textContent = this.text;
    return span;
  }
}

function chips(help: () => IncludeHelp | undefined) {
  const decorator = new MatchDecorator({
    regexp: new RegExp(INCLUDE_PATTERN),
    decorate(add, from, to, match) {
      const parsed = parseInclude(match[1] as string);
      if ("problem" in parsed) {
        add(
          from,
          to,
          Decoration.mark({ class: "cm-include cm-include-invalid", attributes: { title: parsed.problem } }),
        );
        return;
      }
      const pin = help()?.pins()[parsed.reference];
      add(
        from,
        to,
        Decoration.mark({
          class: "cm-include",
          attributes: { title: `Includes ${parsed.prompt}: Ctrl+click (⌘+click) opens it` },
        }),
      );
      const where = parsed.written || parsed.section !== undefined ? parsed.pointer : "production";
      add(
        to,
        to,
        Decoration.widget({ widget: new PinWidget(`${where} · ${pin ? pin.slice(0, 7) : "pinned at save"}`), side: 1 }),
      );
    },
  });
  return ViewPlugin.fromClass(
    class {
      decorations: DecorationSet;
      constructor(view: EditorView) {
        this.decorations = decorator.createDeco(view);
      }
      update(update: ViewUpdate) {
        const repin = update.transactions.some((tr) => tr.effects.some((e) => e.is(pinsChanged)));
        this.decorations = repin ? decorator.createDeco(update.view) : decorator.updateDeco(update, this.decorations);
      }
    },
    { decorations: (plugin) => plugin.decorations },
  );
}

/** The include around a position of the document, if any. */
function includeAt(view: EditorView, pos: number) {
  const line = view.state.doc.lineAt(pos);
  for (const match of line.text.matchAll(new RegExp(INCLUDE_PATTERN))) {
    const from = line.from + match.index;
    if (pos < from || pos > from + match[0].length) continue;
    const parsed = parseInclude(match[1] as string);
    return "problem" in parsed ? null : parsed;
  }
  return null;
}

function jumps(help: () => IncludeHelp | undefined) {
  return EditorView.domEventHandlers({
    mousedown(event, view) {
      if (!(event.ctrlKey || event.metaKey) || event.button !== 0) return false;
      const pos = view.posAtCoords({ x: event.clientX, y: event.clientY });
      const found = pos === null ? null : includeAt(view, pos);
      const open = help()?.open;
      if (!found || !open) return false;
      event.preventDefault();
      open(found.prompt);
      return true;
    },
  });
}

const ID_TYPED = /\{\{>\s*([a-z0-9_-]*)$/;
const POINTER_TYPED = /\{\{>\s*([a-z0-9][a-z0-9_-]*)(?:#[^@{}]*)?@([^@{}\s]*)$/;
const SECTION_TYPED = /\{\{>\s*([a-z0-9][a-z0-9_-]*)#([^@{}]*)$/;

/** `}}` is added after what is chosen unless the include is already closed. */
function closed(context: CompletionContext): boolean {
  return /^[^{}\n]*\}\}/.test(
    context.state.sliceDoc(context.pos, Math.min(context.state.doc.length, context.pos + 200)),
  );
}

function withClose(text: string, close: boolean): Completion["apply"] {
  return (view, _completion, from, to) => {
    const insert = close ? `${text}}}` : text;
    view.dispatch({
      changes: { from, to, insert },
      selection: { anchor: from + text.length },
      userEvent: "input.complete",
    });
  };
}

function completions(help: () => IncludeHelp | undefined) {
  return async (context: CompletionContext): Promise<CompletionResult | null> => {
    const given = help();
    if (!given) return null;
    const line = context.state.doc.lineAt(context.pos);
    const before = line.text.slice(Math.max(0, context.pos - line.from - 300), context.pos - line.from);
    const close = !closed(context);
    const pointer = POINTER_TYPED.exec(before);
    if (pointer) {
      const typed = pointer[2] as string;
      const labels = await given.labels(pointer[1] as string);
      return {
        from: context.pos - typed.length,
        options: labels.map((label) => ({ label, type: "constant", apply: withClose(label, close) })),
        validFor: /^[a-z0-9_-]*$/,
      };
    }
    const section = SECTION_TYPED.exec(before);
    if (section) {
      const typed = section[2] as string;
      const titles = await given.sections(section[1] as string);
      return {
        from: context.pos - typed.length,
        options: titles.map((title) => ({ label: title, type: "property", apply: withClose(title, close) })),
      };
    }
    const id = ID_TYPED.exec(before);
    if (!id) return null;
    const typed = id[1] as string;
    const prompts = await given.prompts(typed);
    return {
      from: context.pos - typed.length,
      options: prompts.map((p) => ({ label: p.id, detail: p.name, type: "variable", apply: withClose(p.id, close) })),
    };
  };
}

// The completion list in the palette's colours (CodeMirror's own selected row, white on #17c, is too faint for
// its detail text); important, as its base theme's rules are more specific than a theme's.
const completionTheme = EditorView.theme({
  ".cm-tooltip.cm-tooltip-autocomplete > ul > li": { padding: "2px 8px", color: "var(--text)" },
  ".cm-tooltip.cm-tooltip-autocomplete > ul > li[aria-selected]": {
    background: "var(--accent) !important",
    color: "var(--accent-text) !important",
  },
  ".cm-completionDetail": { marginLeft: "8px", color: "inherit", fontStyle: "normal" },
});

/** Chips, jumps and completion of includes, asking `help()` for what the page knows. */
export function includeSupport(help: () => IncludeHelp | undefined): Extension {
  return [
    completionTheme,
    chips(help),
    jumps(help),
    autocompletion({ override: [completions(help)], icons: false, activateOnTyping: true }),
  ];
}
