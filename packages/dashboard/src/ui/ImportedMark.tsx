/**
 * The mark of an example result this server did not produce: it came in through an import, so its answer
 * is whatever the file said (docs/playground.md, "Imported results"). It never stands in for a run.
 */
export function ImportedMark() {
  return (
    <span
      className="badge badge-warning"
      title="This answer came in through an import: this server did not run it. Run the example to get an answer produced here."
    >
      imported, not run here
    </span>
  );
}
