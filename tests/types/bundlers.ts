// The esbuild recipe of docs/guide.md as a TypeScript user writes it: the
// package's .wasm export is typed as the URL string a file loader gives.

import wasmUrl from "onestore/onestore-core.wasm";
import { configureBrowserCore } from "onestore";

const url: string = wasmUrl;
configureBrowserCore({ wasmUrl: url });
configureBrowserCore({ wasmUrl: { href: wasmUrl } });
// @ts-expect-error the URL is a string, not a number
const n: number = wasmUrl;
