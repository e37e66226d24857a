// The web UI's entry: the session, the routes, and the pages.

import { render, type JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./styles.css";
import { api, pathOf, type Channel, type Repository, type Session } from "./api";
import { canonicalize, parse, usePath } from "./router";
import { RepositoriesPage } from "./pages/repositories";
import { DocumentsPage } from "./pages/documents";
import { Workspace } from "./workspace/workspace";
import { Shell, Problem } from "./pages/shell";
import { Shortcuts } from "./shortcuts";
import { QuickSwitcher } from "./switcher";
import { mountStorageBanner } from "./storagebanner";

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string>("");
  useEffect(() => {
    api<Session>("GET", "/api/session").then(setSession, (e) => setError(e.message));
  }, []);
  if (error)
    return (
      <Shell>
        <Problem title="Chopin could not start this page">{error}</Problem>
      </Shell>
    );
  if (!session) return null;
  const route = parse(path);
  switch (route.name) {
    case "repositories":
      if (location.pathname !== "/") canonicalize("/");
      return <RepositoriesPage />;
    case "about":
      return <About />;
    case "documents": {
      const canonical = `/documents/${encodeURIComponent(route.owner)}/${encodeURIComponent(route.repository)}`;
      if (location.pathname !== canonical) canonicalize(canonical);
      return <RepositoryName key={canonical} owner={route.owner} repository={route.repository} />;
    }
    case "document":
      return <ResolveDocument key={path} route={route} session={session} />;
    case "legacy-channel":
      return <LegacyChannel key={route.id} id={route.id} />;
    default:
      return (
        <Shell>
          <Problem title="Nothing here">
            This address is not a page of Chopin. <a href="/">See your repositories.</a>
          </Problem>
        </Shell>
      );
  }
}

// About is the About page, a chunk of its own loaded when first shown: the
// first load of every other page stays small.
function About() {
  const [page, setPage] = useState<{ AboutPage: () => JSX.Element } | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    import("./pages/about").then(setPage, () =>
      setError("The About page could not be loaded. Is Chopin still running?"),
    );
  }, []);
  if (error)
    return (
      <Shell>
        <Problem title="About could not be shown">{error}</Problem>
      </Shell>
    );
  return page ? <page.AboutPage /> : null;
}

// RepositoryName shows a repository's documents at its current name: an
// address with a name it had before a rename is replaced by the new one.
function RepositoryName({ owner, repository }: { owner: string; repository: string }) {
  useEffect(() => {
    api<Repository>("GET", `/api/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(repository)}`).then(
      (r) => {
        if (r.owner !== owner || r.repository !== repository)
          canonicalize(`/documents/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repository)}`);
      },
      () => {}, // the page itself says what is wrong
    );
  }, []);
  return <DocumentsPage owner={owner} repository={repository} />;
}

// ResolveDocument finds the document of a slug (current or historical) and
// replaces the address with its canonical route.
function ResolveDocument({
  route,
  session,
}: {
  route: { owner: string; repository: string; slug: string };
  session: Session;
}) {
  const [channel, setChannel] = useState<Channel | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    const p = `/api/repositories/${encodeURIComponent(route.owner)}/${encodeURIComponent(route.repository)}/documents/${encodeURIComponent(route.slug)}`;
    api<Channel>("GET", p).then(
      (ch) => {
        setChannel(ch);
        canonicalize(pathOf(ch.url));
      },
      (e) => setError(e.message),
    );
  }, []);
  if (error)
    return (
      <Shell>
        <Problem title="This document could not be opened">{error}</Problem>
      </Shell>
    );
  if (!channel) return null;
  return <Workspace key={channel.id} initial={channel} session={session} />;
}

function LegacyChannel({ id }: { id: string }) {
  const [error, setError] = useState("");
  useEffect(() => {
    api<Channel>("GET", `/api/channels/${encodeURIComponent(id)}`).then(
      (ch) => canonicalize(pathOf(ch.url)),
      (e) => setError(e.message),
    );
  }, []);
  if (error)
    return (
      <Shell>
        <Problem title="This document could not be opened">{error}</Problem>
      </Shell>
    );
  return null;
}

mountStorageBanner();
render(
  <>
    <App />
    <Shortcuts />
    <QuickSwitcher />
  </>,
  document.getElementById("app")!,
);
