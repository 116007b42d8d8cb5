import { formatCount, plural } from "../ui/format";
import type { Preview } from "./file-preview";

/** A short value for a cell: the first 80 characters on one line. */
export const cellText = (value: string) => {
  const line = value.replace(/\s+/g, " ");
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
};

/** What a file or pasted text holds, before it is sent: the count, the first cases, the first problem. */
export function PreviewTable({ preview }: { preview: Preview }) {
  const { cases, columns } = preview;
  const counted = preview.partial
    ? `At least ${plural(preview.count, "case")} in the file's first ${formatCount(256)} KB; the server reads it all.`
    : `${plural(preview.count, "case")}.`;
  return (
    <section className="dataset-preview" aria-label="Preview">
      <p className="small">
        <strong>{preview.format === "jsonl" ? "JSONL" : "CSV"}</strong> · {counted}
      </p>
      {preview.problem ? (
        <p className="form-alert" role="alert">
          {preview.problem}
        </p>
      ) : null}
      {cases.length > 0 ? (
        <div className="table-wrap">
          <table className="table dataset-preview-table">
            <caption className="visually-hidden">The first cases</caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                {columns.map((name) => (
                  <th key={name} scope="col" className="mono-heading">
                    {name}
                  </th>
                ))}
                <th scope="col">Expected</th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {cases.map((c) => (
                <tr key={c.line}>
                  <td className="num">{c.line}</td>
                  {columns.map((name) => (
                    <td key={name}>
                      {c.vars[name] === undefined ? <span className="subtle">—</span> : cellText(c.vars[name])}
                    </td>
                  ))}
                  <td>{c.expected === undefined ? <span className="subtle">—</span> : cellText(c.expected)}</td>
                  <td>{(c.tags ?? []).join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
