import{a as r,b as o}from"./chunk-JOWVHMB3.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{r as RailroadModule,o as createRailroadServices};
