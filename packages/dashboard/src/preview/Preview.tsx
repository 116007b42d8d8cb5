import { fillVariables, PLACEHOLDER_PATTERN } from "@promptstore/core/prompts/variables";
import { useQuery } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { useParams, useSearchParams } from "react-router";
import { promptViewQuery, sdkQuery, versionsQuery } from "../api/queries";
import { ChunkedText } from "../ui/ChunkedText";
import { CopyButton } from "../ui/CopyButton";
import { Field } from "../ui/Field";
import { shortHash } from "../ui/format";
import { ErrorState, Loading } from "../ui/States";
import { shownVersion } from "./shown-version";
import { curlSnippet, fetchSnippet, pythonSnippet, sdkSnippet } from "./snippets";
import "./preview.css";

/** What an application gets: the assembled text of a version, with and without the guard, filled in. */
export default function Preview() {
  const { projectId = "", promptId = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const versions = useQuery(versionsQuery(projectId, promptId));
  const versionId = useId();
  const set = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value === null) next.delete(key);
    else next.set(key, value);
    setParams(next, { replace: true });
  };

  if (versions.isPending) return <Loading label="Loading the versions…" />;
  if (versions.isError) return <ErrorState error={versions.error} onRetry={() => versions.refetch()} />;
  const list = versions.data;
  const { version, guard } = shownVersion(list, params);

  return (
    <div className="preview">
      <div className="preview-controls card card-body">
        <div className="field preview-version">
          <label className="field-label" htmlFor={versionId}>
            Version
          </label>
          <select id={versionId} className="select" value={version} onChange={(e) => set("version", e.target.value)}>
            {list.production_version ? (
              <option value="production">Production ({shortHash(list.production_version)})</option>
            ) : null}
            <option value="latest">Latest ({shortHash(list.latest_version)})</option>
            <optgroup label="All versions">
              {list.versions.map((v) => (
                <option key={v.version} value={v.version}>
                  {shortHash(v.version)} — {v.message ?? "no message"}
                </option>
              ))}
            </optgroup>
          </select>
        </div>
        <label className="checkbox">
          <input type="checkbox" checked={guard} onChange={(e) => set("guard", e.target.checked ? null : "false")} />
          Include the guard
        </label>
        {!list.production_version ? (
          <p className="field-hint preview-unpublished">
            Not published yet: applications reading production get the latest version until one is published.
          </p>
        ) : null}
      </div>
      <PreviewBody projectId={projectId} promptId={promptId} version={version} guard={guard} />
    </div>
  );
}

function PreviewBody({
  projectId,
  promptId,
  version,
  guard,
}: {
  projectId: string;
  promptId: string;
  version: string;
  guard: boolean;
}) {
  const view = useQuery(promptViewQuery(projectId, promptId, version, guard));
  const sdk = useQuery(sdkQuery);
  const [values, setValues] = useState<Record<string, string>>({});
  const target = { origin: window.location.origin, promptId, version, guard };
  const variables = view.data?.variables ?? [];
  // An empty input leaves its placeholder in the text, so what is still missing stays visible.
  const filled = useMemo(() => {
    if (!view.data) return "";
    const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ""));
    return fillVariables(view.data.prompt, given);
  }, [view.data, values]);

  if (view.isPending) return <Loading label="Assembling the prompt…" />;
  if (view.isError) return <ErrorState error={view.error} onRetry={() => view.refetch()} />;
  const prompt = view.data;
  const missing = variables.filter((v) => !values[v]);

  return (
    <div className="preview-grid">
      <section className="card preview-text" aria-labelledby="assembled-heading">
        <div className="card-header">
          <div>
            <h2 id="assembled-heading">Assembled prompt</h2>
            <p>
              Version <span className="hash">{shortHash(prompt.version)}</span>
              {prompt.label !== "version" ? ` (${prompt.label})` : ""}, {guard ? "with" : "without"} the guard
              {variables.length > 0
                ? missing.length === 0
                  ? ", every variable filled"
                  : `, ${missing.length} of ${variables.length} variables left as written`
                : ""}
              .
            </p>
          </div>
          <CopyButton text={filled} label="Copy text" small />
        </div>
        <pre className="assembled">
          {filled === "" ? (
            <span className="subtle">(empty: every section is disabled)</span>
          ) : (
            <Marked text={filled} />
          )}
        </pre>
      </section>

      <aside className="stack preview-side" aria-label="Variables">
        <section className="card card-body stack" aria-labelledby="variables-heading">
          <h2 id="variables-heading">Variables</h2>
          {variables.length === 0 ? (
            <p className="muted">
              This version has no variables. Write <code>{"{{ name }}"}</code> in a section to add one.
            </p>
          ) : (
            <>
              <p className="field-hint">Try values here; they only change this preview.</p>
              {variables.map((name) => (
                <Field key={name} label={<span className="mono">{name}</span>}>
                  {(control) => (
                    <textarea
                      {...control}
                      className="textarea preview-input"
                      rows={1}
                      value={values[name] ?? ""}
                      onChange={(e) => setValues((v) => ({ ...v, [name]: e.target.value }))}
                    />
                  )}
                </Field>
              ))}
            </>
          )}
        </section>
      </aside>

      <section className="card card-body stack preview-snippets" aria-labelledby="snippets-heading">
        <div>
          <h2 id="snippets-heading">Read it from your app</h2>
          <p className="field-hint">
            With a project API key in <code>PROMPTSTORE_API_KEY</code> (Settings → API keys). These read exactly what is
            shown here: this version{guard ? "" : ", without the guard"}.
          </p>
        </div>
        <div className="snippet-grid">
          <Snippet title="curl" code={curlSnippet(target)} />
          <Snippet title="TypeScript (SDK)" code={sdkSnippet(target, variables, sdk.data ?? [])} />
          <Snippet title="Python" code={pythonSnippet(target, variables, sdk.data ?? [])} />
          <Snippet title="TypeScript (fetch)" code={fetchSnippet(target, variables)} />
        </div>
      </section>
    </div>
  );
}

// Only to mark what is still unfilled in the text; the filling itself is core's `fillVariables`.
const PLACEHOLDER = new RegExp(`(${PLACEHOLDER_PATTERN.source})`);

/** The text with each placeholder still in it marked, so what is missing stands out. */
function Marked({ text }: { text: string }) {
  return <ChunkedText text={text} mark={(chunk) => <MarkedPlaceholders text={chunk} />} />;
}

function MarkedPlaceholders({ text }: { text: string }) {
  const parts = text.split(PLACEHOLDER);
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one split, in order
          <mark key={i} className="placeholder">
            {part}
          </mark>
        ) : (
          part
        ),
      )}
    </>
  );
}

function Snippet({ title, code }: { title: string; code: string }) {
  return (
    <figure className="code-block snippet">
      <figcaption className="code-block-head">
        <span>{title}</span>
        <CopyButton text={code} label={`Copy ${title}`} small />
      </figcaption>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex lint/a11y/useSemanticElements: on a phone the long lines scroll sideways, so the keyboard must reach the block to scroll it (axe: scrollable-region-focusable); a named region, as the pre has to stay the scroll box */}
      <pre tabIndex={0} role="region" aria-label={`${title} snippet`}>
        <code>{code}</code>
      </pre>
    </figure>
  );
}
