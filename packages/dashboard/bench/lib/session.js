// The dashboard benches' way in: the API's envelope, and the printed owner signed in with a password of its own.

/** A request whose answer must be a success envelope: its data and headers. */
export async function json(url, options = {}) {
  const res = await fetch(url, options);
  const body = await res.json();
  if (!body.success) throw new Error(`${options.method ?? "GET"} ${url}: ${res.status} ${body.error}`);
  return { body: body.data, headers: res.headers };
}

/** Signs the printed owner in, replaces the one-time password, and returns the session cookie. */
export async function ownerCookie(url, owner) {
  const post = (path, body, headers = {}) =>
    json(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const first = await post("/api/dashboard/session", owner);
  const cookie = first.headers.get("set-cookie").split(";")[0];
  const changed = await post(
    "/api/dashboard/password",
    { current_password: owner.password, new_password: "bench passphrase 1234" },
    { cookie, "x-csrf-token": first.body.csrf_token },
  );
  return changed.headers.get("set-cookie").split(";")[0].split("=")[1];
}
