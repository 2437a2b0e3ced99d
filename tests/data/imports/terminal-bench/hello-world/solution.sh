#!/bin/bash
echo "Hello, world!" > "${APP_DIR:-/app}/hello.txt"
