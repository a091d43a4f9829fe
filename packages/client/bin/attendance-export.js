#!/usr/bin/env node
// The command's entry. It is committed (unlike dist/) so that npm links it at install time, before the
// package is built; it runs the built command.
import { run } from '../dist/export/cli.js'

run()
