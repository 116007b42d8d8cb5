import type { Migration, MigrationProvider } from "kysely";
import * as m001 from "./001-009/001-initial.js";
import * as m002 from "./001-009/002-rate-limits.js";
import * as m003 from "./001-009/003-accounts.js";
import * as m004 from "./001-009/004-version-documents.js";
import * as m005 from "./001-009/005-events.js";
import * as m006 from "./001-009/006-webhooks.js";
import * as m007 from "./001-009/007-least-privilege.js";
import * as m008 from "./001-009/008-labels.js";
import * as m009 from "./001-009/009-event-types-length.js";
import * as m010 from "./010-019/010-secret-key-check.js";
import * as m011 from "./010-019/011-model-settings.js";
import * as m015 from "./010-019/015-invitations-sealed-secrets.js";
import * as m016 from "./010-019/016-playground.js";
import * as m017 from "./010-019/017-imported-results.js";
import * as m018 from "./010-019/018-section-title-length.js";
import * as m020 from "./020-029/020-oauth.js";
import * as m021 from "./020-029/021-evaluations.js";
import * as m022 from "./020-029/022-evaluation-defaults.js";
import * as m023 from "./020-029/023-label-gates.js";
import * as m024 from "./020-029/024-outcomes.js";
import * as m025 from "./020-029/025-outcome-score-squares.js";
import * as m026 from "./020-029/026-rollout-plans.js";
import * as m027 from "./020-029/027-includes.js";
import * as m028 from "./020-029/028-plan-decisions.js";

/** Migrations are bundled in code so the compiled server needs no migration folder at run time. */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      "001-initial": m001,
      "002-rate-limits": m002,
      "003-accounts": m003,
      "004-version-documents": m004,
      "005-events": m005,
      "006-webhooks": m006,
      "007-least-privilege": m007,
      "008-labels": m008,
      "009-event-types-length": m009,
      "010-secret-key-check": m010,
      "011-model-settings": m011,
      "015-invitations-sealed-secrets": m015,
      "016-playground": m016,
      "017-imported-results": m017,
      "018-section-title-length": m018,
      "020-oauth": m020,
      "021-evaluations": m021,
      "022-evaluation-defaults": m022,
      "023-label-gates": m023,
      "024-outcomes": m024,
      "025-outcome-score-squares": m025,
      "026-rollout-plans": m026,
      "027-includes": m027,
      "028-plan-decisions": m028,
    };
  },
};
