/**
 * Downloads what an address answers (an export: a plain GET that the session's cookie authorizes) under a file
 * name, as a link with `download` would: the browser saves the stream to disk without the page holding it.
 */
export function download(href: string, filename: string): void {
  const link = document.createElement("a");
  link.href = href;
  link.download = filename.replace(/[\\/:*?"<>|]+/g, "-");
  link.rel = "noopener";
  document.body.append(link);
  link.click();
  link.remove();
}
