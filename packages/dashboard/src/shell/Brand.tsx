import { Link } from "react-router";

export function Brand() {
  return (
    <Link to="/" className="brand">
      <span className="brand-mark" aria-hidden="true">
        P
      </span>
      Promptstore
    </Link>
  );
}
