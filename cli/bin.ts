#!/usr/bin/env node
/** The `svc` executable (bin/svc links here). */
import { runCli } from "./main.js";

process.exitCode = await runCli(process.argv.slice(2));
