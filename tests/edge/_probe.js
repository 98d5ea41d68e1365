import { ARCHIVE_FORMAT } from "../../js/archive.js";
export default { fetch() { return new Response(String(ARCHIVE_FORMAT)); } };
