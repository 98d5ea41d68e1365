// A dedicated Worker whose top-level open fails (a name the opfs backend
// refuses), so it never serves (tests/browser/link.test.js).
import { openStore, serve } from "../../../js/browser.js";

const store = await openStore({ backend: "opfs", name: "bad/name" });
serve(store, { methods: { ping: () => "pong" } });
