import { can } from "@promptstore/core/accounts/permissions";
import { Suspense, useEffect, useRef, useState } from "react";
import { Link, NavLink, Outlet, useLocation, useMatch } from "react-router";
import { SignOutButton } from "../auth/SignOutButton";
import { Brand } from "../shell/Brand";
import { findProject, useSession } from "../shell/session";
import { Loading } from "../ui/States";
import { ProjectSwitcher } from "./ProjectSwitcher";

/** The frame of every signed-in page: top bar, the project's navigation, and the page. */
export function Layout() {
  const session = useSession();
  const location = useLocation();
  const match = useMatch("/p/:projectId/*");
  const projectId = match?.params.projectId ?? null;
  const current = projectId ? findProject(session, projectId) : null;
  const [menuOpen, setMenuOpen] = useState(false);
  const mainRef = useRef<HTMLElement>(null);
  const firstRender = useRef(true);

  // After a navigation from outside the page (top bar, a link that is gone), focus goes to the page, so a
  // keyboard or screen-reader user starts reading at the new content; within the page it stays put.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on each navigation
  useEffect(() => {
    setMenuOpen(false);
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    const main = mainRef.current;
    const active = document.activeElement;
    if (main && (!active || active === document.body || !main.contains(active))) main.focus({ preventScroll: true });
  }, [location.pathname]);

  return (
    <div className="app">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Brand />
          <button
            type="button"
            className="button button-small menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="topbar-menu"
            onClick={() => setMenuOpen((open) => !open)}
          >
            {menuOpen ? "Close menu" : "Menu"}
          </button>
          <div id="topbar-menu" className="topbar-menu" data-open={menuOpen}>
            <span className="topbar-sep" aria-hidden="true">
              /
            </span>
            <ProjectSwitcher currentId={current ? current.project.id : null} />
            <div className="user">
              <Link to="/account" className="user-email" title="Account">
                {session.user.email}
              </Link>
              <SignOutButton className="button button-small" />
            </div>
          </div>
        </div>
        {current ? (
          <nav className="subnav" aria-label="Project">
            <div className="subnav-inner">
              <NavLink to={`/p/${current.project.id}/prompts`} className="subnav-link">
                Prompts
              </NavLink>
              <NavLink to={`/p/${current.project.id}/releases`} className="subnav-link">
                Releases
              </NavLink>
              <NavLink to={`/p/${current.project.id}/datasets`} className="subnav-link">
                Datasets
              </NavLink>
              {can(current.role, "write") ? (
                <NavLink to={`/p/${current.project.id}/settings`} className="subnav-link">
                  Settings
                </NavLink>
              ) : null}
              {can(current.role, "admin") ? (
                <NavLink to={`/p/${current.project.id}/audit`} className="subnav-link">
                  Audit
                </NavLink>
              ) : null}
            </div>
          </nav>
        ) : null}
      </header>
      <main id="main" className="main" tabIndex={-1} ref={mainRef}>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}
