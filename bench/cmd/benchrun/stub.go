package main

import "errors"

func tablePhysical(e *env) (*Table, error) { return nil, errNotBuilt }
func tableScale(e *env) (*Table, error)    { return nil, errNotBuilt }
func tableCapacity(e *env) (*Table, error) { return nil, errNotBuilt }

const scaleServerCmd = "scale-server"

func scaleServer(args []string) int { return 0 }

var errNotBuilt = errors.New("not built yet")
